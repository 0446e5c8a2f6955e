"""Which table buckets a micro-batch of `on_update` rewrites (streaming/output.py)."""

from dbt.adapters.window_views.streaming.shapes.output import holding, within

HOUR, DAY = 3_600_000_000, 86_400_000_000


def test_a_range_reaches_the_buckets_it_overlaps():
    after = within(10 * HOUR - 1, None)  # keys from 10:00 on
    assert not after(HOUR, 9) and after(HOUR, 10) and after(HOUR, 11)
    assert after(DAY, 0) and not after(DAY, -1)  # the day that holds 10:00; not the day before
    bounded = within(-HOUR - 1, 0)  # (-1h - 1, 0]: 23:00 on 1969-12-31 up to the epoch
    assert bounded(HOUR, -1) and bounded(HOUR, 0) and not bounded(HOUR, 1) and not bounded(HOUR, -2)


def test_hours_reach_the_buckets_that_hold_them_and_none_between():
    hours = holding([9, 14, -1], HOUR)  # 09:00, 14:00, and 23:00 the day before 1970
    assert [k for k in range(-3, 20) if hours(HOUR, k)] == [-1, 9, 14]
    assert hours(DAY, 0) and hours(DAY, -1) and not hours(DAY, 1) and not hours(DAY, -2)
    assert not holding([], HOUR)(HOUR, 0)
