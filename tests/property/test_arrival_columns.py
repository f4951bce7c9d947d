"""The columns EASY and CREASY keep beside a long queue stay aligned with it (Hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.job import Job
from sitesim.schedulers.queue_order import ArrivalColumns

#: A step: append this many jobs, or take off the jobs at these positions (of the queue then).
Step = tuple[int, list[int]]


@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.lists(st.integers(0, 40), max_size=6)),
        min_size=1,
        max_size=40,
    )
)
def test_the_columns_follow_the_queue_through_appends_and_removals(steps: list[Step]) -> None:
    queue: list[Job] = []
    columns = ArrivalColumns()
    ids = 0
    for appended, picks in steps:
        for _ in range(appended):
            ids += 1
            job = Job(ids % 7 + 1, 10.0, 60.0 + ids, 0)
            job.id, job.submit = ids, float(ids // 3)
            queue.append(job)
            columns.append(job)
        taken = [queue[k % len(queue)] for k in picks] if queue else []
        taken = list(dict.fromkeys(taken))  # (each once, in the order picked)
        stranger = Job(1, 1.0, 1.0, 0)  # (not in the queue: ignored)
        stranger.id = ids + 1
        expected = [job for job in queue if job not in taken]
        columns.remove(queue, [*taken, stranger])
        assert queue == expected
        size, estimate = columns.arrays()
        assert size.tolist() == [job.size for job in queue]
        assert estimate.tolist() == [job.estimate for job in queue]
        assert columns.column("submit").tolist() == [job.submit for job in queue]
        assert columns.column("id").tolist() == [job.id for job in queue]
        del size, estimate  # (a view kept would stop the columns from growing)
