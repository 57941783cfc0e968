"""Lab 3 (03_convert): the jobs a test reads, observed in the rank and read back by the grader.

    observe_jobs(submission, logic, observe)    # test_NAME, in the rank
    check_jobs(obs, logic)                      # check_NAME, in the grader's checking process

A test's ``logic(jobs)`` asks ``jobs`` for the learner's runs (``learner(n, gpu, hosts)``), the
one-process reference and the replay of a run, and fails (convert.fail) naming the edit to look
at. In the rank, RankJobs runs the jobs (the rank itself runs no learner code: the answer cell
only writes train_mn.py) and keeps a summary of each: its records, and the parameters and files
the logic read. The grader runs the same logic on those summaries (ViewJobs) and decides.
"""
from convert import Verdict, learner_job, reference, replay


class RankJobs:
    """The jobs a test's checks read, run from the rank (which runs no learner code: the
    answer cell only writes train_mn.py) and kept as summaries: what each job's records, and
    the parameters and files the checks asked for, were."""

    def __init__(self, submission):
        self.submission, self.kept = submission, {}

    def _keep(self, key, job):
        self.kept.setdefault(key, Watched(job, key))
        return self.kept[key]

    def learner(self, n, gpu=False, hosts=None):
        job = learner_job(self.submission, n, gpu=gpu, hosts=hosts)
        return self._keep(f"{'gpu' if gpu else 'train'}:{n}:{hosts}", job)

    def reference(self):
        return self._keep("reference", reference())

    def replay(self, job):
        return self._keep(f"replay:{job.key}", replay(job.job))

    def summaries(self):
        """``{key: summary}``: plain values and arrays, for the grader's check."""
        return {key: watched.summary() for key, watched in self.kept.items()}


class Watched:
    """A Job, noting which parameters and files were read from it."""

    def __init__(self, job, key):
        self.job, self.key = job, key
        self.n, self.hosts, self.records, self.rc = job.n, job.hosts, job.records, job.rc
        self.read_params, self.read_written = {}, {}

    def problem(self):
        return self.job.problem()

    def params(self, rank, stage):
        got = self.read_params.setdefault(f"{rank}/{stage}", self.job.params(rank, stage))
        return got

    def written(self, rank):
        return self.read_written.setdefault(str(rank), self.job.written(rank))

    def summary(self):
        return {"key": self.key, "n": self.n, "hosts": self.hosts, "records": self.records,
                "rc": self.rc, "problem": self.job.problem(), "params": self.read_params,
                "written": self.read_written}


class JobView:
    """A job as the grader's check sees it: the summary the rank observed (Watched.summary)."""

    def __init__(self, summary):
        self.key, self.n, self.hosts = summary["key"], summary["n"], summary["hosts"]
        self.records, self.rc = summary["records"], summary["rc"]
        self._problem, self._params = summary["problem"], summary["params"]
        self._written = summary["written"]

    def problem(self):
        return self._problem

    def params(self, rank, stage):
        return self._params[f"{rank}/{stage}"]

    def written(self, rank):
        return self._written[str(rank)]


class ViewJobs:
    """The jobs of one test as its rank observed them (the check half's RankJobs)."""

    def __init__(self, summaries):
        self.summaries = summaries

    def learner(self, n, gpu=False, hosts=None):
        return JobView(self.summaries[f"{'gpu' if gpu else 'train'}:{n}:{hosts}"])

    def reference(self):
        return JobView(self.summaries["reference"])

    def replay(self, job):
        return JobView(self.summaries[f"replay:{job.key}"])


def observe_jobs(submission, logic, observe):
    """A test's observe half: run the jobs its ``logic`` reads, and hand the grader their
    summaries. The logic's own verdict here is dropped: the grader decides (check_jobs)."""
    jobs = RankJobs(submission)
    try:
        logic(jobs)
    except Verdict:
        pass  # the check half reaches the same verdict, from what is observed here
    observe(jobs=jobs.summaries())


def check_jobs(obs, logic):
    """A test's check half: ``logic`` on the jobs as observed; None, or what is wrong."""
    try:
        logic(ViewJobs(obs["jobs"]))
    except Verdict as verdict:
        return str(verdict)
    return None
