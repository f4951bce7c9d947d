"""A run's results.json reproduces it: the same configuration gives a byte-identical SWF."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

import sitesim
from sitesim.cli.main import main
from sitesim.models.utility import LeeSnavely
from sitesim.results.report import write_outputs
from sitesim.workload.profile import read_profile
from tests.test_cli import LINE


def rerun(results, out, capsys):  # type: ignore[no-untyped-def]
    code = main(["rerun", str(results), "--out", str(out)])
    return code, capsys.readouterr()


def test_a_site_level_run_reruns_byte_for_byte(tmp_path, capsys):
    first = tmp_path / "first"
    argv = ["run", "--users", "4", "--days", "14", "--warmup", "2", "--model", "static",
            "-s", "CREASY", "--alpha", "3000", "--seed", "5", "--out", str(first)]  # fmt: skip
    assert main(argv) == 0
    folder = first / "users-0004-CREASY"
    code, printed = rerun(folder / "results.json", tmp_path / "again", capsys)
    assert code == 0 and "same summary as" in printed.out
    for name in ("simulated.swf", "jobs.csv", "users.csv"):
        original = (folder / name).read_bytes()
        assert (tmp_path / "again" / name).read_bytes() == original, name
        assert len(original) > 200


def test_a_replay_reruns_byte_for_byte(tmp_path, capsys):
    lines = [LINE.format(n=i + 1, t=7 * i, r=20 + i % 9, p=1 + i % 3, e=90) for i in range(60)]
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    argv = ["replay", str(trace), "-s", "CONSERVATIVE", "--load", "0.7", "--estimates",
            "exact", "--out", str(tmp_path / "first")]  # fmt: skip
    assert main(argv) == 0
    code, printed = rerun(tmp_path / "first" / "results.json", tmp_path / "again", capsys)
    assert code == 0 and "same summary" in printed.out
    original = (tmp_path / "first" / "simulated.swf").read_bytes()
    assert (tmp_path / "again" / "simulated.swf").read_bytes() == original


def test_run_of_a_result_config_gives_the_same_records():
    result = sitesim.simulate(6, "EASY", days=10, warmup_days=1, seed=4)
    again = sitesim.run(result.config)
    assert again.config == result.config
    for name in result.records.dtype.names:
        assert np.array_equal(again.records[name], result.records[name], equal_nan=True), name


def test_a_changed_profile_is_refused(tmp_path, capsys):
    profile = tmp_path / "p.json"
    profile.write_bytes(
        resources.files("sitesim").joinpath("data/default_profile.json").read_bytes()
    )
    out = tmp_path / "first"
    argv = ["run", "--users", "2", "--days", "3", "--warmup", "0", "--profile", str(profile),
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    stored = json.loads((out / "users-0002-EASY" / "results.json").read_text())
    assert stored["config"]["profile"] == str(profile)
    assert stored["config"]["profile_sha256"] == read_profile(str(profile))[1]
    profile.write_text(profile.read_text() + "\n")  # the same distributions, another file
    code = main(["rerun", str(out / "users-0002-EASY" / "results.json")])
    message = capsys.readouterr().err.strip()
    assert code == 2 and f"profile {profile} has changed since the run" in message


def test_a_custom_run_cannot_be_rerun(tmp_path, capsys):
    def factory(uid, profile, procs, seed):  # type: ignore[no-untyped-def]
        return sitesim.UserModel(kind="static").user(uid, profile, procs, seed)

    result = sitesim.simulate(2, "EASY", model=factory, days=2, warmup_days=0)
    assert result.config is None
    write_outputs(tmp_path / "custom", result)
    assert json.loads((tmp_path / "custom" / "results.json").read_text())["config"] is None
    code = main(["rerun", str(tmp_path / "custom" / "results.json")])
    assert code == 2
    assert "cannot be rerun" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"summary": {}}'])
def test_rerun_refuses_what_is_not_a_results_file(tmp_path, capsys, text):
    path = tmp_path / "r.json"
    path.write_text(text)
    assert main(["rerun", str(path)]) == 2
    assert "r.json: not a results.json" in capsys.readouterr().err


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A short run's results.json, written once."""
    out = tmp_path_factory.mktemp("stored")
    argv = ["run", "--users", "2", "--days", "3", "--warmup", "0", "--out", str(out)]
    assert main(argv) == 0
    return json.loads((out / "users-0002-EASY" / "results.json").read_text())


@pytest.mark.parametrize("summary", ["removed", {}, {"no_such_metric": 1.0}])
def test_a_rerun_with_nothing_to_compare_does_not_claim_the_same_summary(
    tmp_path, capsys, stored_run, summary
):
    document = dict(stored_run)
    if summary == "removed":
        del document["summary"]
    else:
        document["summary"] = summary
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    code = main(["rerun", str(path)])
    printed = capsys.readouterr()
    assert code != 0 and "same summary" not in printed.out
    assert "nothing to compare with" in printed.err or "nothing compared" in printed.err


def test_a_rerun_of_another_versions_results_says_so(tmp_path, capsys, stored_run):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({**stored_run, "sitesim_version": "0.0.1"}))
    assert main(["rerun", str(path)]) == 0
    printed = capsys.readouterr()
    assert "same summary" in printed.out
    assert f"was written by sitesim 0.0.1; this is sitesim {sitesim.__version__}" in printed.err


def test_the_configuration_of_a_simulate_result_reproduces_a_scheduler_that_draws():
    """The GA draws from a stream seeded by the run's seed (use_seed), also in simulate()."""
    model = sitesim.UserModel(utility=LeeSnavely())
    result = sitesim.simulate(20, "GA", model=model, procs=32, days=7, warmup_days=1, seed=2,
                              generations=4)  # fmt: skip
    again = sitesim.run(result.config)
    assert result.scheduler_stats["passes_evolved"] > 0
    assert np.array_equal(again.records["start"], result.records["start"])
