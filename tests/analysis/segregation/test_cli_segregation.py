"""`python -m analysis segregation`: output against the slow formulas, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main

from . import slow_reference as ref


@pytest.fixture
def population_csv(tmp_path):
    rng = np.random.default_rng(21)
    n = 90
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    frame["gender"] = np.where(rng.random(n) < 0.35, "female", "male")
    frame["area"] = rng.integers(0, 5, size=n)
    path = tmp_path / "pop.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _argv(path, out, features: str = "a,b", *extra: str, group: str = "gender") -> list[str]:
    """`segregation` on the CSV at path, writing into folder out; extra flags after."""
    return [
        "segregation",
        "--input",
        str(path),
        "--group",
        group,
        "--features",
        features,
        "--out",
        str(out),
        *extra,
    ]


def test_cli_writes_the_indices(population_csv, tmp_path):
    path, frame = population_csv
    out = tmp_path / "out"
    rc = main(_argv(path, out, "a,b", "--units", "area"))
    assert rc == 0
    got = json.loads((out / "indices.json").read_text())
    assert set(got) == {"n", "minority", "eps", "centralization", "atkinson", "avg_proximity"}
    X = frame[["a", "b"]].to_numpy()
    is_min = frame["gender"].to_numpy() == "female"
    e = ref.eps(X, is_min)
    assert got["n"] == 90 and got["minority"] == "female"
    assert got["eps"] == pytest.approx(e, abs=1e-9)
    assert got["centralization"] == pytest.approx(ref.centralization(X, is_min, e), abs=1e-9)
    assert got["avg_proximity"] == pytest.approx(ref.avg_proximity(X, is_min), abs=1e-9)
    assert got["atkinson"] == pytest.approx(ref.atkinson(is_min, frame["area"]), abs=1e-9)


def test_cli_eps_options(population_csv, tmp_path):
    path, frame = population_csv
    X = frame[["a", "b", "c"]].to_numpy()
    is_min = frame["gender"].to_numpy() == "female"
    out = tmp_path / "o"
    base = _argv(path, out, "a,b,c", "--clusters", "4")
    assert main([*base, "--eps-quantile", "0.1", "--eps-with-self-pairs"]) == 0
    assert json.loads((out / "indices.json").read_text())["eps"] == pytest.approx(
        ref.eps(X, is_min, 0.1, with_self=True), abs=1e-9
    )
    assert main([*base, "--eps", "0.75", "--minority", "male"]) == 0
    got = json.loads((out / "indices.json").read_text())
    assert got["eps"] == 0.75 and got["minority"] == "male"
    assert got["centralization"] == pytest.approx(ref.centralization(X, ~is_min, 0.75), abs=1e-9)


@pytest.mark.parametrize(
    "edit,args,message",
    [
        (None, ["--features", "a,zz"], "unknown column(s) zz"),
        (lambda f: f.assign(gender="male"), [], "exactly two groups"),
        (lambda f: f.assign(a=f["a"].where(f.index != 4)), [], "row 5, column 'a'"),
        (lambda f: f.assign(b=f["b"].astype(object).where(f.index != 2, "x")), [], "row 3"),
        (lambda f: f.assign(gender=["female"] + ["male"] * (len(f) - 1)), [], "at least 2"),
        (lambda f: f.assign(gender=f["gender"].where(f.index != 7)), [], "row 8, column 'gender'"),
        (None, ["--clusters", "0"], "--clusters"),
        (None, ["--eps", "-1"], "--eps"),
        (None, ["--eps-quantile", "2"], "--eps-quantile"),
        (None, ["--minority", "other"], "not one of the groups"),
        (None, ["--backend", "numpy", "--device", "cuda"], "--device needs --backend torch"),
        (None, ["--backend", "numba", "--device", "cuda"], "--device needs --backend torch"),
        (None, ["--features", "a,gender"], "also a feature"),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(
    population_csv, tmp_path, capsys, edit, args, message
):
    path, frame = population_csv
    if edit is not None:
        edit(frame).to_csv(path, index=False)
    out = tmp_path / "never"
    argv = _argv(path, out)
    for flag, value in zip(args[::2], args[1::2], strict=True):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not out.exists()


def test_cli_missing_file_and_folder(tmp_path, capsys):
    assert main(_argv(tmp_path / "none.csv", tmp_path / "o", "a", group="g")) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "x.csv").write_text("a,g\n1,x\n2,y\n")
    assert main(_argv(tmp_path / "x.csv", tmp_path / "nofolder" / "o", "a", group="g")) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_runs_as_a_module(population_csv, tmp_path):
    path, _ = population_csv
    out = tmp_path / "m"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            *_argv(path, out, "a,b,c", "--eps", "1", "--eps-quantile", "0.3"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "not allowed with argument" in done.stderr
    assert not out.exists()


def test_cli_auto_backend_without_a_gpu_gives_the_numpy_figures(
    population_csv, tmp_path, monkeypatch
):
    """`--backend auto` runs numpy's blocks when torch sees no GPU: the same files."""
    from analysis.segregation import backends

    monkeypatch.setattr(backends, "gpu_available", lambda: False)
    path, _ = population_csv
    written = []
    for backend in ("numpy", "auto"):
        out = tmp_path / backend
        assert main(_argv(path, out, "a,b,c", "--backend", backend, "--no-progress")) == 0
        written.append([(out / name).read_bytes() for name in ("indices.json", "indices.csv")])
    assert written[0] == written[1]


def test_cli_device_without_a_gpu_is_refused(population_csv, tmp_path, capsys, monkeypatch):
    """`--device cuda` alone takes the default backend, auto, to that device; where torch
    sees no GPU the command says so (exit 2) instead of failing inside torch."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    path, _ = population_csv
    out = tmp_path / "never"
    assert main(_argv(path, out, "a,b", "--device", "cuda")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "torch sees no GPU" in err and "\n" not in err
    assert not out.exists()


def test_cli_default_backend_is_auto(population_csv, tmp_path, monkeypatch):
    """Without --backend the command asks for `auto` (the GPU, else numba, else numpy)."""
    from analysis.segregation import indices

    seen = []
    real = indices.make_ops

    def spy(backend, device=None, n_jobs=None):
        seen.append(backend)
        return real(backend, device, n_jobs)

    monkeypatch.setattr(indices, "make_ops", spy)
    path, _ = population_csv
    assert main(_argv(path, tmp_path / "o", "a,b", "--no-progress")) == 0
    assert seen == ["auto"]
