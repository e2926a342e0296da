"""The download route of report files written by ``services.reports``."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, send_file

from app.services.reports import Reports


def register(server: Flask, reports: Reports) -> None:
    """Add the download route of REPORTS' files to the Flask server."""

    @server.get("/reports/<token>/<name>")
    def download_report(token: str, name: str) -> Any:
        path = reports.path_of(token, name)
        if path is None:
            abort(404)
        return send_file(path, as_attachment=True, download_name=name)
