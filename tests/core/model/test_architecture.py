"""Architecture strings (brokerage/model/architecture.py): sw_platform<@base_platform><#host_cpu_spec><&host_gpu_spec>
parsed, and malformed ones refused naming the wrong part."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.model.architecture import ArchitectureError, parse_architecture

EL9 = "x86_64-el9-gcc13-opt"


@pytest.mark.parametrize(
    ("text", "sw_platform", "base", "cpu", "gpu"),
    [
        ("", "", "", None, None),
        (EL9, EL9, "", ("x86_64", None, None, False), None),
        (EL9 + "@el9", EL9, "el9", ("x86_64", None, None, False), None),
        (EL9 + "@el9#x86_64-intel-avx2&nvidia-a100", EL9, "el9", ("x86_64", "intel", "avx2", True), ("nvidia", "a100")),
        ("#(x86_64|aarch64)", "", "", ("(x86_64|aarch64)", None, None, True), None),
        ("(x86_64|aarch64)-el9.*", "(x86_64|aarch64)-el9.*", "", ("(x86_64|aarch64)", None, None, False), None),
        ("#([a-z0-9_]+)-amd", "", "", ("([a-z0-9_]+)", "amd", None, True), None),
        ("#x86_64-*-avx2", "", "", ("x86_64", None, "avx2", True), None),
        ("&amd", "", "", None, ("amd", None)),
        (EL9 + "&nvidia", EL9, "", ("x86_64", None, None, False), ("nvidia", None)),
    ],
)
def test_parse_architecture(
    text: str,
    sw_platform: str,
    base: str,
    cpu: tuple[Any, ...] | None,
    gpu: tuple[Any, ...] | None,
) -> None:
    """sw_platform<@base_platform><#host_cpu_spec><&host_gpu_spec>; without '#' the arch is sw_platform's first part."""
    a = parse_architecture(text)
    assert a.sw_platform == sw_platform
    assert a.base_platform == base
    got_cpu = None if a.cpu is None else (a.cpu.arch, a.cpu.vendor, a.cpu.instr, a.cpu.explicit)
    assert got_cpu == cpu
    got_gpu = None if a.gpu is None else (a.gpu.vendor, a.gpu.model)
    assert got_gpu == gpu


def test_regexp_detection() -> None:
    """A regexp is recognised by its metacharacters; dots alone keep a cmtconfig literal."""
    assert parse_architecture("(x86_64|aarch64)-el9.*").sw_platform_is_regex
    assert not parse_architecture("x86_64-centos7-gcc8.3-opt").sw_platform_is_regex


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#-intel", "host_cpu_spec: empty architecture in '#-intel'"),
        ("#x86_64--avx2", "host_cpu_spec: empty vendor in '#x86_64--avx2'"),
        ("#x86_64-", "host_cpu_spec: empty vendor in '#x86_64-'"),
        ("#(x86_64|aarch64", "host_cpu_spec: unbalanced parentheses in '#(x86_64|aarch64'"),
        ("#x86_64)", "host_cpu_spec: unbalanced parentheses in '#x86_64)'"),
        ("#[x86", "host_cpu_spec: unbalanced parentheses"),
        ("#a-b-c-d", "host_cpu_spec: more than 3 parts"),
        ("#x86_64-in.*", "host_cpu_spec: regular expressions are allowed only in the architecture"),
        ("#+x86", "host_cpu_spec: invalid regular expression"),
        ("#", "host_cpu_spec: empty after '#'"),
        ("&nvidia-a100-80g", "host_gpu_spec: more than 2 parts (vendor-model)"),
        ("&-a100", "host_gpu_spec: empty vendor"),
        ("&", "host_gpu_spec: empty after '&'"),
        ("x@el9@el8", "base_platform: repeated '@'"),
        ("x#a#b", "host_cpu_spec: repeated '#'"),
        ("x&a&b", "host_gpu_spec: repeated '&'"),
        ("x@", "base_platform: empty after '@'"),
        ("x#x86_64@el9", "architecture: parts must come in the order"),
        ("x&nvidia#x86_64", "architecture: parts must come in the order"),
        ("(x86_64-el9", "sw_platform: unbalanced parentheses"),
        ("*x86_64-el9", "sw_platform: invalid regular expression"),
        ("x86_64 el9", "architecture: whitespace"),
    ],
)
def test_parse_architecture_errors(text: str, message: str) -> None:
    """A malformed architecture raises ArchitectureError naming the wrong part."""
    with pytest.raises(ArchitectureError, match=None) as info:
        parse_architecture(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)
