"""gdpconfig: registry lookups, typed parsing of CONFIG rows, layering, errors and fingerprints."""

from __future__ import annotations

import pytest

from brokerage.model.gdpconfig import (
    PARAMS,
    REGISTRY,
    Config,
    ConfigError,
    ConfigRow,
    lookup_param,
    parse_assignments,
    parse_value,
)


def row(key: str, value: str | None, type_: str = "int", vo: str | None = "atlas", **kw: object) -> ConfigRow:
    """A CONFIG row of the job broker (app jedi, component jobbroker) unless told otherwise."""
    fields = {"app": "jedi", "component": "jobbroker", **kw}
    return ConfigRow(key=key, value=value, type=type_, vo=vo, **fields)  # type: ignore[arg-type]


def test_registry_lookup_returns_panda_coordinates_and_defaults() -> None:
    """Registered keys carry PanDA's component, type and default (reference §3.1 / §6.2)."""
    p = lookup_param("NQUEUED_SAT_CAP")
    assert (p.key, p.component, p.type, p.default, p.app, p.vo) == (
        "NQUEUED_SAT_CAP",
        "jobbroker",
        "int",
        150,
        "jedi",
        "atlas",
    )
    assert lookup_param("NQUEUED_NUC_CAP_FOR_JOBS").default == 10000
    assert lookup_param("NW_THRESHOLD").default == 1.7
    assert lookup_param("IO_INTENSITY_CUTOFF").default == 200
    assert lookup_param("NQUEUED_NUC_CAP").component == "taskbrokerage"
    assert set(REGISTRY) == {p.key for p in PARAMS}
    assert Config().get("NQUEUED_SAT_CAP") == Config()["NQUEUED_SAT_CAP"] == 150


def test_every_default_is_within_its_own_bounds() -> None:
    """Each registered default passes the parameter's own type and range check."""
    for p in PARAMS:
        assert Config().with_overrides({p.key: p.default}).get(p.key) == p.default, p.key


def test_family_key_falls_back_to_base_key() -> None:
    """DISK_THRESHOLD_<gshare> resolves to DISK_THRESHOLD's parameter and value unless set itself."""
    assert lookup_param("DISK_THRESHOLD_Analysis").key == "DISK_THRESHOLD"
    assert Config().get("DISK_THRESHOLD_Analysis") == 100
    config = Config().with_overrides({"DISK_THRESHOLD": 50, "DISK_THRESHOLD_MC Simulation": 20})
    assert config.get("DISK_THRESHOLD_Analysis") == 50
    assert config.get("DISK_THRESHOLD_MC Simulation") == 20
    with pytest.raises(ConfigError, match="DISK_THRESHOLD_"):
        lookup_param("DISK_THRESHOLD_")  # an empty suffix is not a family member
    with pytest.raises(ConfigError) as err:
        lookup_param("NQUEUED_SAT_CAP_MCORE")  # not a family parameter
    assert err.value.key == "NQUEUED_SAT_CAP_MCORE"


@pytest.mark.parametrize(
    ("key", "raw", "type_", "expected"),
    [
        ("NW_ACTIVE", "True", "bool", True),
        ("NW_ACTIVE", "false", "boolean", False),
        ("NW_ACTIVE", " TRUE ", "bool", True),
        ("NQUEUED_SAT_CAP", "300", "int", 300),
        ("NQUEUED_SAT_CAP", " 300 ", "integer", 300),
        ("NQUEUED_SAT_CAP", "3e2", "int", 300),
        ("NW_THRESHOLD", "1.5", "float", 1.5),
        ("NW_THRESHOLD", "2", "int", 2.0),  # an int row for a float parameter is widened
        ("ANAL_BASIC_WEIGHT", "new", "str", "new"),
    ],
)
def test_typed_parsing_of_config_strings(key: str, raw: str, type_: str, expected: object) -> None:
    """CONFIG.VALUE strings are parsed by CONFIG.TYPE (bool, int, float, str spellings as PanDA allows)."""
    value = parse_value(key, raw, type_)
    assert value == expected
    assert type(value) is type(expected)


def test_json_typed_rows_are_decoded() -> None:
    """A TYPE=json row (VALUE_JSON) holding a value of the parameter's type is decoded, as PanDA does."""
    assert parse_value("NQUEUED_SAT_CAP", "300", "json") == 300
    config = Config.from_rows([row("NQUEUED_SAT_CAP", None, "json", value_json=300)])
    assert config.get("NQUEUED_SAT_CAP") == 300


def test_json_row_of_the_wrong_type_is_an_error() -> None:
    """A TYPE=json row whose decoded value does not fit the parameter is a ConfigError naming the key."""
    with pytest.raises(ConfigError) as err:
        parse_value("NQUEUED_SAT_CAP", '{"a": 1}', "json")
    assert err.value.key == "NQUEUED_SAT_CAP"
    assert "an integer in [1, 10000000]" in str(err.value)


def test_vo_row_beats_voless_row_beats_default() -> None:
    """The task VO's own CONFIG row wins over the VO-less row, which wins over the registry default."""
    assert Config.from_rows([]).get("NQUEUED_SAT_CAP") == 150
    voless = row("NQUEUED_SAT_CAP", "200", vo=None)
    atlas = row("NQUEUED_SAT_CAP", "300", vo="atlas")
    other = row("NQUEUED_SAT_CAP", "400", vo="cms")
    assert Config.from_rows([voless]).get("NQUEUED_SAT_CAP") == 200
    assert Config.from_rows([voless, atlas]).get("NQUEUED_SAT_CAP") == 300
    assert Config.from_rows([atlas, voless]).get("NQUEUED_SAT_CAP") == 300
    assert Config.from_rows([other, voless]).get("NQUEUED_SAT_CAP") == 200  # another VO's row is not read
    assert Config.from_rows([other], vo="cms").get("NQUEUED_SAT_CAP") == 400


def test_rows_of_unknown_keys_or_other_components_are_ignored() -> None:
    """CONFIG holds many keys brokerage does not read; rows of another component do not set a key."""
    config = Config.from_rows([row("SOME_OTHER_KEY", "x", "str"), row("NQUEUED_SAT_CAP", "999", component="core")])
    assert config.get("NQUEUED_SAT_CAP") == 150
    assert config.stored == {}


def test_rows_of_another_app_are_ignored() -> None:
    """A row with the right component and key but another APP is not the parameter PanDA's JEDI reads."""
    config = Config.from_rows([row("NQUEUED_SAT_CAP", "999", app="pandaserver")])
    assert config.get("NQUEUED_SAT_CAP") == 150


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("NO_SUCH_KEY", 1, ["NO_SUCH_KEY", "unknown gdpconfig key"]),
        ("NQUEUED_SAT_CAP", 0, ["NQUEUED_SAT_CAP", "below the minimum", "[1, 10000000]"]),
        ("NW_QUEUE_IMPORTANCE", 2.0, ["NW_QUEUE_IMPORTANCE", "above the maximum", "[0, 1]"]),
        ("NQUEUED_SAT_CAP", "abc", ["NQUEUED_SAT_CAP", "cannot read 'abc'", "an integer in [1, 10000000]"]),
        ("NQUEUED_SAT_CAP", 1.5, ["NQUEUED_SAT_CAP", "an integer in [1, 10000000]"]),
        ("NW_ACTIVE", "maybe", ["NW_ACTIVE", "true or false"]),
        ("NW_ACTIVE", 1, ["NW_ACTIVE", "true or false"]),
        ("NQUEUED_SAT_CAP", None, ["NQUEUED_SAT_CAP", "a value is required"]),
        ("ANAL_BASIC_WEIGHT", "newest", ["ANAL_BASIC_WEIGHT", "one of original, new"]),
    ],
)
def test_bad_values_raise_config_error_naming_key_and_range(key: str, value: object, words: list[str]) -> None:
    """Unknown keys, out-of-range and mistyped values raise ConfigError naming the key and what is allowed."""
    with pytest.raises(ConfigError) as err:
        Config().with_overrides({key: value})
    assert err.value.key == key
    for w in words:
        assert w in str(err.value)


def test_bad_stored_row_raises_naming_the_key() -> None:
    """A stored CONFIG row with an out-of-range value is an error, not silently the default."""
    with pytest.raises(ConfigError) as err:
        Config.from_rows([row("NQUEUED_SAT_CAP", "-5")])
    assert err.value.key == "NQUEUED_SAT_CAP"
    assert "[1, 10000000]" in str(err.value)


def test_overrides_layer_on_stored_rows() -> None:
    """What-if overrides beat stored rows, which beat defaults; layering returns new objects."""
    stored = Config.from_rows([row("NQUEUED_SAT_CAP", "300"), row("NW_THRESHOLD", "1.5", "float")])
    what_if = stored.with_overrides({"NQUEUED_SAT_CAP": 400})
    assert what_if.get("NQUEUED_SAT_CAP") == 400
    assert what_if.get("NW_THRESHOLD") == 1.5
    assert what_if.get("IO_INTENSITY_CUTOFF") == 200
    assert stored.get("NQUEUED_SAT_CAP") == 300  # unchanged
    again = what_if.with_overrides({"NW_THRESHOLD": "1.9"})  # strings are parsed
    assert (again.get("NQUEUED_SAT_CAP"), again.get("NW_THRESHOLD")) == (400, 1.9)
    assert again.changed() == {"NQUEUED_SAT_CAP": 400, "NW_THRESHOLD": 1.9}
    assert parse_assignments(["NQUEUED_SAT_CAP=300", "NW_ACTIVE=false"]) == {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False}


def test_fingerprint_is_stable() -> None:
    """The fingerprint depends only on the effective values, not on how or in which order they were set."""
    base = Config().fingerprint()
    assert base == Config().fingerprint()
    assert Config().with_overrides({"NQUEUED_SAT_CAP": 150}).fingerprint() == base  # same as the default
    a = Config().with_overrides({"NQUEUED_SAT_CAP": 300, "NW_THRESHOLD": 1.5})
    b = Config().with_overrides({"NW_THRESHOLD": "1.5"}).with_overrides({"NQUEUED_SAT_CAP": "300"})
    c = Config.from_rows([row("NQUEUED_SAT_CAP", "300"), row("NW_THRESHOLD", "1.5", "float")])
    assert a.fingerprint() == b.fingerprint() == c.fingerprint() != base
    assert Config().with_overrides({"NQUEUED_SAT_CAP": 301}).fingerprint() != a.fingerprint()
    assert len(base) == 12


def test_unknown_key_suggests_the_closest_known_keys() -> None:
    """An unknown key names itself and suggests the closest registered keys (any case); a key like none of them
    says how many keys exist instead of listing them all."""
    from brokerage.model.gdpconfig import lookup_param

    with pytest.raises(ConfigError) as near:
        lookup_param("NQUEUED_SATCAP")
    assert near.value.line().startswith("NQUEUED_SATCAP: unknown gdpconfig key; did you mean NQUEUED_SAT_CAP")
    with pytest.raises(ConfigError) as lower:
        lookup_param("nqueued_sat_cap")
    assert "did you mean NQUEUED_SAT_CAP" in str(lower.value)
    with pytest.raises(ConfigError) as far:
        lookup_param("ZZZ")
    assert "keys are known" in str(far.value) and "NQUEUED_SAT_CAP" not in str(far.value)
    assert Config().with_overrides({}).get("NQUEUED_SAT_CAP") == 150


def test_a_bad_set_of_edits_gives_every_problem_at_once() -> None:
    """Edits are parsed once, in the core: a bad set is refused whole, naming each refused key with its allowed range."""
    from brokerage.model.gdpconfig import parse_edits

    with pytest.raises(ConfigError) as err:
        parse_assignments(["NQUEUED_SAT_CAP=-1", "NW_ACTIVE=maybe", "NQUEUED_SATCAP=3", "junk", "NW_THRESHOLD=1.5"])
    problems = err.value.problems
    assert list(problems) == ["junk", "NQUEUED_SAT_CAP", "NW_ACTIVE", "NQUEUED_SATCAP"]
    assert "[1, 10000000]" in problems["NQUEUED_SAT_CAP"] and "true or false" in problems["NW_ACTIVE"]
    assert "did you mean NQUEUED_SAT_CAP" in problems["NQUEUED_SATCAP"] and problems["junk"] == "expected KEY=VALUE"
    line = err.value.line()  # the CLI's one line says all four
    assert line.count("bad gdpconfig value") == 3 and "NQUEUED_SATCAP: unknown gdpconfig key" in line

    # the tuning page's rows: the same parser, dropping edits equal to the stored value, refusing family variants
    page = parse_edits({"NQUEUED_SAT_CAP": 150.0, "NW_ACTIVE": False, "DISK_THRESHOLD_Analysis": "5"}, Config(),
                       variants=False)  # fmt: skip
    assert page.overrides == {"NW_ACTIVE": False} and list(page.errors) == ["DISK_THRESHOLD_Analysis"]
    # with the grid's members a family variant must name one of them
    grid = parse_edits({"DISK_THRESHOLD_Nope": "5", "DISK_THRESHOLD_Analysis": "5"}, members=lambda t, c: {"Analysis"})
    assert (
        grid.overrides == {"DISK_THRESHOLD_Analysis": 5}
        and "is not a gshare of the grid" in grid.errors["DISK_THRESHOLD_Nope"]
    )
