"""The API and the pages say each error of the core's tree one way, by its class (app/api.py STATUS, error_alert)."""

from __future__ import annotations

from typing import Any

import pytest

from app.api import STATUS, error_body
from app.components.layout import error_alert
from brokerage.model.errors import BrokerageError, status_of
from tests.core.model.test_errors import IDS, SAMPLES

# the status every sample of the tree answers with: 404 unknown ids, 400 bad input or edits or a refused simulation,
# 409 a conflict or a cancelled run, 503 a database that cannot answer
EXPECTED = {
    "UnknownIdError": 404,
    "UnknownTaskError": 404,
    "ConfigConflictError": 409,
    "Cancelled": 409,
    "StoreError": 503,
    "DatabaseFileError": 503,
    "StoreBusyError": 503,
    "DatabaseError": 503,
    "ClusterLost": 503,
}


@pytest.mark.parametrize(("exc", "branch"), SAMPLES, ids=IDS)
def test_each_error_class_has_its_api_status(exc: BrokerageError, branch: type) -> None:
    """Each error class answers the status of its nearest class in STATUS (400 unless listed above)."""
    assert status_of(exc, STATUS, 500) == EXPECTED.get(type(exc).__name__, 400)


@pytest.mark.parametrize(("exc", "branch"), SAMPLES, ids=IDS)
def test_each_error_class_is_said_inline_in_its_own_words(exc: BrokerageError, branch: type) -> None:
    """A page says an error of the tree as its own sentence, never with the exception's name or a traceback."""
    text = str(error_alert("Somewhere", exc))
    assert exc.line() in text and type(exc).__name__ not in text and "Traceback" not in text


def test_a_refused_set_of_edits_names_every_field() -> None:
    """The API body of a ConfigError refusing several edits names each refused key with its problem."""
    from brokerage.model.gdpconfig import parse_edits

    with pytest.raises(BrokerageError) as err:
        parse_edits({"DIRAC_MAX_JOBS_IN_TQ": "0", "DIRAC_JOBS_PER_TRY": "x"}).checked()
    body = error_body(err.value)
    assert body["field"] == "DIRAC_MAX_JOBS_IN_TQ" and set(body["problems"]) == {"DIRAC_MAX_JOBS_IN_TQ",
                                                                                  "DIRAC_JOBS_PER_TRY"}  # fmt: skip


def test_the_api_answers_core_errors_with_their_status(app_client: Any) -> None:
    """Through the server: an unknown task is a JSON 404 naming it, without KeyError's quotes."""
    r = app_client.get("/api/tasks/987654321/jobs")
    assert r.status_code == 404 and r.is_json
    assert r.get_json()["error"].startswith("unknown task 987654321")
