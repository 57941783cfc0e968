"""Lab 3 (03_convert): the checks of the training edits, (3) the multi-node optimizer, (4)
scatter_dataset and (5) the multi-node evaluator, as ``logic(jobs)`` that fails naming the edit.

What is checked is what is meant: the sentences each rank trained on and evaluated (coverage and
counts, not sizes or the mean), the batches of every update, and the parameters against one
process trained on the same sentences.
"""
import numpy as np
from convert import (
    BATCH,
    EDITS,
    ITERATIONS,
    LAYOUTS,
    N_DEV,
    fail,
    first_difference,
    ranks_text,
)
from mnedits import finished


def as_pairs(sentences):
    return [tuple(map(tuple, pair)) for pair in sentences]


def contiguous_in_order(shard, full):
    """Whether ``shard`` is a run of consecutive sentences of ``full``, in ``full``'s order."""
    if not shard:
        return True
    return any(full[b:b + len(shard)] == shard for b, pair in enumerate(full) if pair == shard[0])


def every_sentence_once_per_epoch(jobs):
    full = as_pairs(jobs.reference().records[0]["dataset"])
    want = {pair: full.count(pair) for pair in full}
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        at = f"at {ranks_text(n, hosts)}"
        shards = [as_pairs(rec["dataset"]) for rec in job.records]
        sizes = [len(s) for s in shards]
        got = {}
        for shard in shards:
            for pair in shard:
                got[pair] = got.get(pair, 0) + 1
        foreign = [p for p in got if p not in want]
        missing = sum(max(0, k - got.get(p, 0)) for p, k in want.items())
        extra = sum(sizes) - len(full)
        if foreign:
            fail(f"{EDITS[4]}: {at} the ranks train on sentences that are not in the training set")
        if n > 1 and all(s >= len(full) for s in sizes):
            fail(f"{EDITS[4]}: {at} every rank trains on all {len(full)} sentences, so each epoch "
                 f"uses each sentence {n} times: give each rank its shard with "
                 f"chainermn.scatter_dataset")
        if missing:
            fail(f"{EDITS[4]}: {at}, {missing} of the {len(full)} training sentences are on no "
                 f"rank (shards of {sizes}): scatter the whole training set")
        if len(set(sizes)) > 1:
            fail(f"{EDITS[4]}: {at} the shards have {sizes} sentences: ranks would run different "
                 f"numbers of iterations per epoch; keep scatter_dataset's "
                 f"force_equal_length=True (its default)")
        if extra >= n:
            fail(f"{EDITS[4]}: {at} the shards hold {sum(sizes)} sentences for {len(full)}: "
                 f"{extra} repeated, but equal shards need fewer than {n} repeats")
        if n > 1 and all(contiguous_in_order(shard, full) for shard in shards):
            fail(f"{EDITS[4]}: {at} each rank's shard is a run of consecutive sentences of the "
                 f"training set, in its order: deal them shuffled, "
                 f"chainermn.scatter_dataset(train, comm, shuffle=True, seed=0), so that no rank "
                 f"trains on one end of a corpus that is sorted (by length, by source...)")


def identical_parameters(jobs):
    for n, hosts in LAYOUTS:
        if n == 1:
            continue
        job = finished(jobs, n, hosts)
        final0 = job.params(0, "final")
        for rank in range(1, n):
            diff = first_difference(final0, job.params(rank, "final"), rtol=0, atol=0)
            if diff is None:
                continue
            name, by = diff
            if first_difference(job.params(0, "grad"), job.params(rank, "grad"), rtol=0, atol=0):
                why = ("the ranks' gradients were not averaged before the update: wrap the "
                       "optimizer with chainermn.create_multi_node_optimizer(optimizer, comm)")
            elif first_difference(job.params(0, "first"), job.params(rank, "first"), 0, 0):
                why = ("rank 0's initial weights were never broadcast (the grader gave each "
                       "rank different ones, as an unseeded run would): the multi-node optimizer "
                       "broadcasts them at its first update")
            else:
                why = "something other than the averaged gradient changes the weights"
            fail(f"{EDITS[3]}: at {ranks_text(n, hosts)}, after {ITERATIONS} iterations rank "
                 f"{rank}'s {name} differs from rank 0's (by up to {by:.3g}): {why}")


def batches_problem(job, n, hosts):
    """None when every rank made ITERATIONS updates on batches of BATCH sentences; else what
    differs, blaming the edit that makes it differ (not the multi-node optimizer)."""
    at = f"at {ranks_text(n, hosts)}"
    per_rank = [job.records[rank]["batch_sizes"] for rank in range(n)]
    for rank, sizes in enumerate(per_rank):
        if len(sizes) != ITERATIONS:
            return (f"the training length: {at} rank {rank} made {len(sizes)} updates, but "
                    f"--iterations {ITERATIONS} asks each rank for {ITERATIONS}: keep the "
                    f"trainer's stop trigger (args.iterations, 'iteration') as it is")
        if max(sizes) != BATCH:
            return (f"the per-rank batch: {at} rank {rank}'s batches have up to {max(sizes)} "
                    f"sentences; with --batchsize {BATCH} each rank's batch is {BATCH} (the "
                    f"effective batch is {BATCH} x {n}): do not divide it")
    for step in range(ITERATIONS):
        sizes = [per_rank[rank][step] for rank in range(n)]
        if len(set(sizes)) > 1:
            return (f"{EDITS[4]}: {at}, at update {step + 1} the ranks' batches held {sizes} "
                    f"sentences: a rank whose shard is shorter ends its epoch with a short batch, "
                    f"so the mean of the ranks' gradients is not the gradient of their union. "
                    f"Keep scatter_dataset's force_equal_length=True (its default), so that "
                    f"every shard has the same length")
    return None


def same_as_one_process_with_n_times_the_batch(jobs):
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        problem = batches_problem(job, n, hosts)
        if problem:
            fail(problem)
        ref = jobs.replay(job)
        diff = first_difference(job.params(0, "final"), ref.params(0, "final"))
        if diff:
            name, by = diff
            fail(f"{EDITS[3]}: at {ranks_text(n, hosts)}, after {ITERATIONS} iterations rank 0's "
                 f"{name} differs (by up to {by:.3g}) from one process trained with batch "
                 f"{n} x {BATCH} on the same sentences from rank 0's initial weights (skipping "
                 f"the first batch, since ChainerMN's first update only broadcasts): the "
                 f"multi-node optimizer must average the gradients of every step")


def validation_loss_over_the_whole_dev_set(jobs):
    one = jobs.reference().records[0]
    ref = one["validation"]
    want = {k: v for ev in ref.values() for k, v in ev.items()}["validation/main/loss"]
    dev = as_pairs(next(iter(one["evaluated"].values())))
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        at = f"at {ranks_text(n, hosts)}"
        seen = {}
        for rank, rec in enumerate(job.records):
            if not rec["validation"]:
                fail(f"{EDITS[5]}: {at} rank {rank} has no Evaluator extension: every rank runs "
                     f"the (multi-node) evaluator")
            evaluated = as_pairs(next(iter(rec["evaluated"].values())))
            seen[rank] = evaluated
            if n > 1 and len(evaluated) >= len(dev):
                fail(f"{EDITS[5]}: {at} rank {rank} evaluated {len(evaluated)} dev sentences, "
                     f"all {len(dev)} of the dev set: the mean comes out right, but every rank "
                     f"repeats the whole evaluation. Scatter the dev set "
                     f"(chainermn.scatter_dataset(dev, comm)) so that each rank evaluates its "
                     f"share, and let the multi-node evaluator average the ranks' means")
        missing = len(set(dev) - {pair for pairs in seen.values() for pair in pairs})
        total = sum(len(pairs) for pairs in seen.values())
        if missing or total >= len(dev) + n:
            fail(f"{EDITS[5]}: {at} the ranks evaluated {[len(p) for p in seen.values()]} dev "
                 f"sentences, {missing} of the {len(dev)} on no rank: scatter the whole dev set, "
                 f"each sentence to one rank")
        for rank, rec in enumerate(job.records):
            losses = [v for ev in rec["validation"].values() for k, v in ev.items()
                      if k.endswith("/main/loss")]
            if not losses or not np.isclose(losses[0], want, rtol=1e-9, atol=0):
                got = f"{losses[0]:.6f}" if losses else "no main/loss"
                fail(f"{EDITS[5]}: {at} rank {rank} reports a validation loss of {got}, but one "
                     f"process scores the whole dev set (on the same weights) at {want:.6f}: wrap "
                     f"the Evaluator with chainermn.create_multi_node_evaluator(evaluator, comm), "
                     f"and scatter the dev set (its {N_DEV} sentences split equally, so the mean "
                     f"of the ranks' means is exact)")
