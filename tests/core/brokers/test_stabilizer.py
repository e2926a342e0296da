"""Analysis Stabilizer: hand-computed cases for every not-throttled condition and every branch of every max()."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.brokers.stabilizer import compute, stabilizer, stabilizer_grid
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import anal_queue, anal_task, counts, grid, user_counts
from tests.reference.analysis_reference import stabilize

UA = "User Analysis"
CFG = Config()  # defaults: BASE_QUEUE_LENGTH_PER_PQ 100, BASE_EXPECTED_WAIT_HOUR_ON_PQ 8, STATIC ratio 2,
# MAX_EXPECTED_WAIT_HOUR 12, BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER 5, BASE_QUEUE_RATIO_ON_PQ 0.05


def one(nQ: float, nR: float, trr: float, nR_user: float, nQ_user: float, nUsers: float, config: Config = CFG) -> dict:
    """The Stabilizer for a single PQ, as a plain record."""
    arrays = [np.array([x], dtype=float) for x in (nQ, nR, trr, nR_user, nQ_user, nUsers)]
    return compute(*arrays, config).record(0)


# --- can the PQ be throttled? --------------------------------------------------------------------


def test_not_throttled_when_queue_shorter_than_base_length() -> None:
    """nQ(PQ) < BASE_QUEUE_LENGTH_PER_PQ: the PQ is not throttled, however long the user's queue."""
    r = one(nQ=99, nR=10, trr=0, nR_user=0, nQ_user=99, nUsers=1)
    assert not r["can_throttle"] and not r["throttled"]
    assert r["release_rule"] == "nQ < BASE_QUEUE_LENGTH_PER_PQ"
    assert r["max_q_len"] == 100 and r["nQ_user"] == 99  # nQ_max 100 x 1/1


def test_not_throttled_when_queue_drains_within_base_wait() -> None:
    """nQ(PQ) < BASE_EXPECTED_WAIT_HOUR_ON_PQ × trr(PQ) (150 < 8 × 20): the PQ is not throttled."""
    r = one(nQ=150, nR=10, trr=20, nR_user=0, nQ_user=150, nUsers=10)
    assert not r["can_throttle"] and not r["throttled"]
    assert r["release_rule"] == "nQ < BASE_EXPECTED_WAIT_HOUR_ON_PQ x trr"


def test_throttleable_at_both_limits() -> None:
    """nQ(PQ) = BASE_QUEUE_LENGTH_PER_PQ and nQ(PQ) = 8 × trr are not 'less than': the PQ can be throttled."""
    r = one(nQ=160, nR=0, trr=20, nR_user=0, nQ_user=0, nUsers=1)
    assert r["can_throttle"] and r["release_rule"] == ""
    assert one(nQ=100, nR=0, trr=0, nR_user=0, nQ_user=0, nUsers=1)["can_throttle"]


def test_throttle_from_is_the_larger_release_limit() -> None:
    """A PQ can throttle from nQ = max(BASE_QUEUE_LENGTH_PER_PQ, 8 × trr): 160 at trr 20, 100 at trr 5."""
    assert one(nQ=0, nR=0, trr=20, nR_user=0, nQ_user=0, nUsers=1)["throttle_from"] == 160
    assert one(nQ=0, nR=0, trr=5, nR_user=0, nQ_user=0, nUsers=1)["throttle_from"] == 100


# --- nQ_max(PQ) = max(BASE_QUEUE_LENGTH_PER_PQ, STATIC_MAX_QUEUE_RUNNING_RATIO × nR, MAX_EXPECTED_WAIT_HOUR × trr) ---


def test_nq_max_base_queue_length_wins() -> None:
    """nR = 40, trr = 5: max(100, 80, 60) = 100 from BASE_QUEUE_LENGTH_PER_PQ."""
    r = one(nQ=200, nR=40, trr=5, nR_user=0, nQ_user=0, nUsers=1)
    assert r["nQ_max"] == 100 and r["nQ_max_rule"] == "BASE_QUEUE_LENGTH_PER_PQ"


def test_nq_max_running_ratio_wins() -> None:
    """nR = 100, trr = 10: max(100, 200, 120) = 200 from STATIC_MAX_QUEUE_RUNNING_RATIO × nR."""
    r = one(nQ=200, nR=100, trr=10, nR_user=0, nQ_user=0, nUsers=1)
    assert r["nQ_max"] == 200 and r["nQ_max_rule"] == "STATIC_MAX_QUEUE_RUNNING_RATIO x nR"


def test_nq_max_expected_wait_wins() -> None:
    """nR = 50, trr = 20: max(100, 100, 240) = 240 from MAX_EXPECTED_WAIT_HOUR × trr."""
    r = one(nQ=300, nR=50, trr=20, nR_user=0, nQ_user=0, nUsers=1)
    assert r["nQ_max"] == 240 and r["nQ_max_rule"] == "MAX_EXPECTED_WAIT_HOUR x trr"


def test_nq_max_tie_goes_to_earlier_term() -> None:
    """nR = 50, trr = 0: max(100, 100, 0) ties; the earlier term (BASE_QUEUE_LENGTH_PER_PQ) is named."""
    assert one(nQ=200, nR=50, trr=0, nR_user=0, nQ_user=0, nUsers=1)["nQ_max_rule"] == "BASE_QUEUE_LENGTH_PER_PQ"


# --- percentage(PQ, user) = max(nR(PQ, user) / nR(PQ), 1 / nUsers(PQ)) ----------------------------


def test_percentage_running_share_wins() -> None:
    """nR_user = 60 of nR = 100 with 4 users: max(0.6, 0.25) = 0.6."""
    r = one(nQ=200, nR=100, trr=0, nR_user=60, nQ_user=0, nUsers=4)
    assert r["percentage"] == pytest.approx(0.6) and r["percentage_rule"] == "nR_user / nR"


def test_percentage_one_over_users_wins() -> None:
    """nR_user = 10 of nR = 100 with 4 users: max(0.1, 0.25) = 0.25."""
    r = one(nQ=200, nR=100, trr=0, nR_user=10, nQ_user=0, nUsers=4)
    assert r["percentage"] == pytest.approx(0.25) and r["percentage_rule"] == "1 / nUsers"


def test_percentage_without_running_jobs() -> None:
    """nR(PQ) = 0 gives no running share, so percentage = 1 / nUsers."""
    r = one(nQ=200, nR=0, trr=0, nR_user=0, nQ_user=0, nUsers=5)
    assert r["percentage"] == pytest.approx(0.2) and r["percentage_rule"] == "1 / nUsers"


# --- max_q_len = max(BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER, BASE_QUEUE_RATIO_ON_PQ × nR, nQ_max × percentage) ----


def test_max_q_len_user_default_wins() -> None:
    """nR = 40, 50 users: max(5, 2, 100 × 0.02) = 5 from BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER."""
    r = one(nQ=200, nR=40, trr=0, nR_user=0, nQ_user=6, nUsers=50)
    assert r["max_q_len"] == 5 and r["max_q_len_rule"] == "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"
    assert r["throttled"]  # 6 > 5


def test_max_q_len_running_ratio_wins() -> None:
    """nR = 1000, 100 users: nQ_max = 2000, max(5, 50, 2000 × 0.01 = 20) = 50 from BASE_QUEUE_RATIO_ON_PQ × nR."""
    r = one(nQ=2000, nR=1000, trr=0, nR_user=0, nQ_user=50, nUsers=100)
    assert r["max_q_len"] == pytest.approx(50) and r["max_q_len_rule"] == "BASE_QUEUE_RATIO_ON_PQ x nR"
    assert not r["throttled"]  # 50 is not > 50


def test_max_q_len_user_share_of_nq_max_wins() -> None:
    """nR = 200 (nQ_max 400), user runs 20 with one other user: max(5, 10, 400 × 0.5) = 200."""
    r = one(nQ=300, nR=200, trr=0, nR_user=20, nQ_user=201, nUsers=2)
    assert r["max_q_len"] == pytest.approx(200) and r["max_q_len_rule"] == "nQ_max x percentage"
    assert r["throttled"]


def test_throttled_only_strictly_above_max_q_len() -> None:
    """nQ(PQ, user) > max_q_len skips the PQ; equal does not."""
    assert not one(nQ=300, nR=200, trr=0, nR_user=20, nQ_user=200, nUsers=2)["throttled"]
    assert one(nQ=300, nR=200, trr=0, nR_user=20, nQ_user=201, nUsers=2)["throttled"]


def test_config_overrides_change_the_limits() -> None:
    """Every parameter comes from gdpconfig (here BASE_QUEUE_LENGTH_PER_PQ=10 makes a short queue throttleable)."""
    cfg = Config().with_overrides({"BASE_QUEUE_LENGTH_PER_PQ": 10, "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER": 2})
    r = one(nQ=50, nR=0, trr=0, nR_user=0, nQ_user=3, nUsers=10, config=cfg)
    assert r["can_throttle"] and r["nQ_max"] == 10 and r["max_q_len"] == 2 and r["throttled"]


@pytest.mark.parametrize(
    "case",
    [
        (99, 10, 0, 0, 99, 1),
        (150, 10, 20, 0, 150, 10),
        (200, 40, 5, 0, 6, 50),
        (2000, 1000, 0, 0, 51, 100),
        (300, 200, 0, 20, 201, 2),
        (300, 50, 20, 40, 150, 3),
        (500, 0, 0, 0, 150, 3),
    ],
)
def test_vectorised_matches_scalar_reference(case: tuple[float, ...]) -> None:
    """The vectorised Stabilizer gives the scalar reference's numbers."""
    got = one(*case)
    want = stabilize(*case, CFG)
    for k, v in want.items():
        assert got[k] == pytest.approx(v), k


# --- from a snapshot -----------------------------------------------------------------------------


def _snap() -> GridSnapshot:
    """Two PQs: A busy (alice, bob; carol in another share), B short (bob)."""
    qs = [anal_queue("A", "S1", trr=5.0), anal_queue("B", "S2")]
    jc = counts("A", UA, running=200, activated=150, assigned=10, defined=5, starting=5) + counts(
        "A", "MC", running=999
    )
    jc += counts("B", UA, running=10, activated=20)
    uc = user_counts("A", running=20, activated=201) + user_counts("A", user="bob", running=180)
    uc += user_counts("A", user="idle", running=0, activated=0)  # no jobs: not a user of the PQ
    uc += user_counts("A", user="carol", gshare="MC", running=50)  # another share
    uc += user_counts("B", user="bob", activated=3)
    return grid(qs, [anal_task(1)], job_counts=jc, user_job_counts=uc)


def test_stabilizer_from_snapshot() -> None:
    """nQ = defined+assigned+activated+starting and nR = running in the gshare; nUsers counts users with jobs there."""
    s = stabilizer(GridCache(_snap()), CFG, "alice", UA)
    assert s.nQ[0] == 170 and s.nR[0] == 200 and s.trr[0] == 5
    assert s.nUsers[0] == 2 and s.nR_user[0] == 20 and s.nQ_user[0] == 201
    assert s.nQ_max[0] == 400 and s.max_q_len[0] == 200 and s.throttled[0]


def test_stabilizer_counts_the_task_user_where_they_have_no_job() -> None:
    """At a PQ where the user has no job yet, nUsers includes the user (bob + alice = 2)."""
    s = stabilizer(GridCache(_snap()), CFG, "alice", UA)
    assert s.nUsers[1] == 2 and s.nQ_user[1] == 0 and s.percentage[1] == 0.5 and not s.can_throttle[1]


def test_stabilizer_grid_has_every_pq_user_pair() -> None:
    """stabilizer_grid lists every (gshare, PQ, user) with jobs, with the same numbers as the per-user Stabilizer."""
    snap = _snap()
    df = stabilizer_grid(GridCache(snap), CFG)
    pairs = set(zip(df["gshare"], df["panda_queue"], df["produsername"], strict=True))
    assert pairs == {(UA, "A", "alice"), (UA, "A", "bob"), (UA, "B", "bob"), ("MC", "A", "carol")}
    row = df[(df["panda_queue"] == "A") & (df["produsername"] == "alice")].iloc[0]
    assert row["max_q_len"] == 200 and row["throttled"] and row["nQ_max_rule"] == "STATIC_MAX_QUEUE_RUNNING_RATIO x nR"
    bob = df[(df["panda_queue"] == "A") & (df["produsername"] == "bob")].iloc[0]
    assert bob["percentage"] == pytest.approx(0.9) and not bob["throttled"]
    carol = df[df["produsername"] == "carol"].iloc[0]
    assert carol["nR"] == 999 and carol["nUsers"] == 1
    for col in ("nQ", "nR", "trr", "can_throttle", "nQ_max", "nQ_max_rule", "nR_user", "nUsers", "percentage",
                "max_q_len", "max_q_len_rule", "nQ_user", "throttled"):  # fmt: skip
        assert col in df.columns


def test_stabilizer_grid_one_share_and_empty() -> None:
    """A gshare argument restricts the grid to that share; a share without user jobs gives an empty table."""
    snap = _snap()
    assert set(stabilizer_grid(GridCache(snap), CFG, UA)["gshare"]) == {UA}
    empty = stabilizer_grid(GridCache(snap), CFG, "No Such Share")
    assert len(empty) == 0 and {"gshare", "panda_queue", "produsername", "max_q_len"} <= set(empty.columns)


def test_share_with_only_finished_jobs_has_no_users() -> None:
    """A gshare whose user rows hold no queued or running jobs yields an empty user map, not an error."""
    from brokerage.brokers.stabilizer import share_users
    from tests.builders import anal_queue, grid, user_counts

    snap = grid(
        [anal_queue("A", "S1")],
        [],
        user_job_counts=user_counts("A", "bob", gshare="Group Analysis", finished=3),
    )
    users = share_users(GridCache(snap), "Group Analysis")
    assert users.by_user == {}
    assert len(users.queue) == 0
