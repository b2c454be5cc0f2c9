from tests.conftest import AgentSession, Principal


def test_viewer_sees_its_principal_and_session(operator: Principal, agent) -> None:
    data = operator.api("{ viewer { principal { name isOperator } credential session { id } } }")
    assert data["viewer"]["principal"] == {"name": "operator", "isOperator": True}
    assert data["viewer"]["credential"] == "PERSONAL"
    session: AgentSession = agent()
    data = session.api("{ viewer { credential session { id } } }")
    assert data["viewer"] == {"credential": "SESSION", "session": {"id": session.session_id}}
