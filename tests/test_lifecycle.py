"""The lifecycle model: JobState and Transition classification."""

from __future__ import annotations

from jobguard.validators.lifecycle import JobState, Phase, Transition, classify
from jobguard.validators.model import decode_job
from jobguard.validators.prepare import apply_job_defaults
from tests.builders import LATER, START, cond, job, with_status


def state(obj):
    return JobState.of(apply_job_defaults(decode_job(obj)))


def test_created_suspended_and_unsuspended():
    assert classify(None, state(job(suspend=True))) == Transition.CREATED_SUSPENDED
    assert classify(None, state(job())) == Transition.CREATED_UNSUSPENDED


def test_phases():
    assert state(job()).phase is Phase.PENDING
    assert state(job(suspend=True)).phase is Phase.SUSPENDED
    assert state(with_status(job(), startTime=START, active=1)).phase is Phase.RUNNING
    done = with_status(
        job(),
        startTime=START,
        completionTime=LATER,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    assert state(done).phase is Phase.COMPLETE
    assert state(done).finished
    failed = with_status(job(), conditions=[cond("FailureTarget"), cond("Failed")])
    assert state(failed).phase is Phase.FAILED


def test_suspended_never_started_and_predicate_p():
    fresh = state(job(suspend=True))
    assert fresh.suspended_never_started and fresh.safely_suspended
    ran = state(
        with_status(job(suspend=True), startTime=START, active=0, conditions=[cond("Suspended")])
    )
    assert not ran.suspended_never_started and ran.safely_suspended
    stopping = state(with_status(job(suspend=True), startTime=START, active=2))
    assert not stopping.safely_suspended


def test_resume_suspend_and_resuspend_after_start():
    suspended = job(suspend=True)
    running = with_status(job(), startTime=START, active=1)
    assert Transition.RESUMED in classify(state(suspended), state(job()))
    t = classify(state(running), state(with_status(job(suspend=True), startTime=START, active=1)))
    assert Transition.SUSPENDED in t and Transition.RESUSPENDED_AFTER_START in t
    t = classify(state(job()), state(job(suspend=True)))
    assert Transition.SUSPENDED in t and Transition.RESUSPENDED_AFTER_START not in t


def test_status_transitions():
    old = with_status(job(suspend=True), startTime=START, conditions=[cond("Suspended")])
    new = with_status(job(), startTime=LATER, conditions=[cond("Suspended", "False")])
    old_job, new_job = apply_job_defaults(decode_job(old)), apply_job_defaults(decode_job(new))
    t = classify(JobState.of(old_job), JobState.of(new_job), old_job, new_job)
    assert Transition.SUSPENDED_CONDITION_CLEARED in t
    assert Transition.START_TIME_RESET in t
    assert Transition.RESUMED in t
    finished = with_status(
        job(),
        startTime=START,
        completionTime=LATER,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    t = classify(state(job()), state(finished))
    assert {
        Transition.STARTED,
        Transition.COMPLETED,
        Transition.FINISHED,
        Transition.SUCCESS_CRITERIA_MET,
    } <= {f for f in Transition if f in t and f.value}


def test_managed_externally():
    assert state(job(managedBy="kueue.x-k8s.io/multikueue")).managed_externally
    assert not state(job(managedBy="kubernetes.io/job-controller")).managed_externally
    assert not state(job()).managed_externally
