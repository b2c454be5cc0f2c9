from tests.support import work


def test_general_task_from_claim_to_done(operator, agent) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    claim = work.claimed(a.api, project, task_id)
    assert claim["task"]["state"] == "IN_PROGRESS"
    assert claim["attempt"]["generation"] == 1
    renewed = work.renew(a.api, claim["attempt"])
    assert renewed["__typename"] == "AttemptPayload", renewed
    assert work.checkpoint(a.api, claim["attempt"])["__typename"] == "AttemptPayload"
    refused = work.submit(a.api, claim["attempt"])
    assert refused["__typename"] == "InvalidTransition", refused
    assert work.accept(a.api, claim["attempt"])["__typename"] == "AttemptPayload"
    done = work.submit(a.api, claim["attempt"])
    assert done["__typename"] == "AttemptPayload", done
    assert done["task"]["state"] == "DONE"
