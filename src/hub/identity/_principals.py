"""Principals: the people and agents hub knows, and a person's password.

A password is stored only as its argon2 hash (`passwords`), slow on purpose; signing in
with it is authentication's (`hub.identity.service.login_with_password`).
"""

from __future__ import annotations

from collections.abc import Collection

from argon2 import PasswordHasher
from sqlalchemy import select

from hub.errors import NotFound, ValidationFailed
from hub.events.service import About, record_event
from hub.identity.errors import PrincipalNameTaken
from hub.identity.tables import Principal
from hub.identity.views import PrincipalView
from hub.identity.vocabulary import IdentityEvent, PrincipalKind
from hub.ids import new_id
from hub.inputs import clean_choice
from hub.mapping import view_of
from hub.storage.unit_of_work import UnitOfWork

passwords = PasswordHasher()


def clean(field: str, value: str, *, max_length: int = 200, required: bool = True) -> str:
    """A one-line field of an identity operation (a name, a label, a reason): trimmed,
    bounded, without control characters."""
    value = value.strip()
    if required and not value:
        raise ValidationFailed(field, "must not be empty")
    if len(value) > max_length:
        raise ValidationFailed(field, f"must be at most {max_length} characters")
    if any(ord(ch) < 32 for ch in value):
        raise ValidationFailed(field, "must not contain control characters")
    return value


def create_principal(
    uow: UnitOfWork,
    *,
    name: str,
    kind: str,
    operator: bool = False,
    password: str | None = None,
) -> PrincipalView:
    name = clean("name", name, max_length=120)
    kind = clean_choice("kind", kind, PrincipalKind)
    if password is not None and kind != PrincipalKind.HUMAN:
        raise ValidationFailed("password", "only human principals log in with a password")
    if password is not None and len(password) < 8:
        raise ValidationFailed("password", "must be at least 8 characters")
    if uow.session.scalar(select(Principal.id).where(Principal.name == name)) is not None:
        raise PrincipalNameTaken(name)
    uow.no_lock_needed("a new principal: its name's uniqueness is the unique index's")
    row = Principal(
        id=new_id("prn"),
        name=name,
        kind=kind,
        is_operator=operator,
        password_hash=passwords.hash(password) if password is not None else None,
        created_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        IdentityEvent.PRINCIPAL_CREATED,
        About(None, row.id),
        by=None,
        payload={"name": name, "kind": kind, "operator": operator},
    )
    return principal_view(row)


def get_principal(uow: UnitOfWork, principal_id_or_name: str) -> PrincipalView:
    return principal_view(principal_row(uow, principal_id_or_name))


def list_principals(uow: UnitOfWork) -> list[PrincipalView]:
    rows = uow.session.scalars(select(Principal).order_by(Principal.created_at)).all()
    return [principal_view(row) for row in rows]


def principal_names(uow: UnitOfWork, principal_ids: Collection[str]) -> dict[str, str]:
    """Display names for principal ids (unknown ids are left out)."""
    if not principal_ids:
        return {}
    rows = uow.session.execute(
        select(Principal.id, Principal.name).where(Principal.id.in_(sorted(principal_ids)))
    ).all()
    return {principal_id: name for principal_id, name in rows}


def set_password(uow: UnitOfWork, principal: str, password: str) -> None:
    row = principal_row(uow, principal)
    if row.kind != PrincipalKind.HUMAN:
        raise ValidationFailed("password", "only human principals log in with a password")
    if len(password) < 8:
        raise ValidationFailed("password", "must be at least 8 characters")
    row.password_hash = passwords.hash(password)


def principal_row(uow: UnitOfWork, principal_id_or_name: str, *, lock: bool = False) -> Principal:
    """`lock`: row-locked, so issuing a credential and disabling the principal are
    serialized (a token issued concurrently with `disable_principal` cannot survive it)."""
    # The id wins: a principal *named* like another's id must not receive its tokens.
    row = uow.session.get(Principal, principal_id_or_name, with_for_update=True if lock else None)
    if row is None:
        by_name = select(Principal).where(Principal.name == principal_id_or_name)
        row = uow.session.scalar(by_name.with_for_update() if lock else by_name)
    if row is None:
        raise NotFound("principal", principal_id_or_name)
    return row


def principal_view(row: Principal) -> PrincipalView:
    return view_of(PrincipalView, row)
