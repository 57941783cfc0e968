"""The run folder's files (dlhack.jobs.runfiles): one naming scheme, and the log kept short."""
from dlhack.jobs.runfiles import output_tail, parse_name, run_file


def test_one_naming_scheme_for_every_run_file(tmp_path):
    assert run_file(tmp_path, "stack", 3) == tmp_path / "rank.3.stack"
    assert run_file(tmp_path, "out") == tmp_path / "mpiexec.out"
    assert parse_name("rank.12.crash") == (12, "crash")
    assert parse_name("mpiexec.out") == ("mpiexec", "out")
    assert parse_name("rank.x.out") is None and parse_name("key.0") is None


def test_the_log_keeps_the_end_of_every_source(tmp_path):
    run_file(tmp_path, "out", 0).write_text("".join(f"chatter {i}\n" for i in range(1000)))
    run_file(tmp_path, "out", 1).write_text("rank 1 says why it failed\n")
    run_file(tmp_path, "out").write_text("mpiexec: BAD TERMINATION\n")
    log = output_tail(tmp_path, 600)
    assert len(log) < 700
    assert "[0] chatter 999" in log and "[0] chatter 0\n" not in log
    assert "[1] rank 1 says why it failed" in log
    assert log.endswith("[mpiexec] mpiexec: BAD TERMINATION")


def test_the_end_is_read_from_the_end_in_a_fixed_budget(tmp_path):
    """A flood of output costs what its last lines do: tail reads ``budget`` bytes from the end,
    cut at a line's start (a file far bigger than the budget: a sparse 1 GB hole, then lines)."""
    from dlhack.jobs.runfiles import read, tail

    path = run_file(tmp_path, "out", 0)
    with open(path, "wb") as f:
        f.truncate(1 << 30)
        f.seek(0, 2)
        f.write(b"".join(b"line %d\n" % k for k in range(1000)))
    text = tail(path, budget=100)
    assert text.endswith("line 999\n") and len(text) <= 100
    assert text.startswith("line ") and "\0" not in text
    assert output_tail(tmp_path, 300).splitlines()[-1] == "[0] line 999"
    assert len(output_tail(tmp_path, 300)) <= 300 + 10
    assert read(tmp_path, "out", 0, budget=20) == "line 998\nline 999\n"
    assert tail(tmp_path / "none") == ""
