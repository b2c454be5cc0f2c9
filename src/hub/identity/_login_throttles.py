"""Throttling password guesses at the dashboard's sign-in (`login_throttles`).

Every sign-in attempt is counted, before its password is checked, against the name
typed and against the client's address (docs/ops/limits.md, "Sign-in throttling"):

- an attempt is *admitted* (`admit_login`) in a write transaction that locks both rows,
  so attempts made at once, by any number of threads or server processes, are counted
  one after another and no more than the limit are ever checked;
- the attempt that reaches a limit is still checked; it also locks that name or address
  out for `login_lockout_seconds`, and every attempt until then is refused
  (`SignInThrottled`) without looking at the password, so a lockout says nothing about
  whether the name exists or the password was right;
- a successful sign-in (`login_succeeded`) clears the name's count and gives the address
  back the attempt it took: people signing in behind one address do not lock it;
- a count lapses `login_failure_window_seconds` after its first attempt; an operator
  clears a lockout at once (`clear_login_lockout`, the API's `clearLoginLockout`, `hub
  login clear`).

Names are counted as typed (trimmed, case-folded), whether or not a principal has one,
for the same reason. Rows past their window and lockout are deleted by the server's
upkeep (`prune_login_throttles`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import delete, select, tuple_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from hub.errors import PermissionDenied, ValidationFailed, raises
from hub.identity._principals import clean
from hub.identity.errors import SignInThrottled
from hub.identity.tables import LoginThrottle
from hub.identity.views import Actor, ClearedLoginLockout, LoginThrottleView
from hub.identity.vocabulary import ThrottledBy
from hub.mapping import view_of
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork

_KEY_LENGTH = 200

Key = tuple[ThrottledBy, str]


def throttle_keys(*, account: str | None, address: str | None) -> list[Key]:
    """What an attempt is counted against, in the one order every transaction locks
    them (so two attempts never wait on each other's rows crosswise)."""
    keys: list[Key] = []
    if account is not None and account.strip():
        keys.append((ThrottledBy.ACCOUNT, account.strip().casefold()[:_KEY_LENGTH]))
    if address:
        keys.append((ThrottledBy.ADDRESS, address[:_KEY_LENGTH]))
    return sorted(keys)


def admit_login(uow: UnitOfWork, *, account: str | None, address: str | None) -> None:
    """Count one sign-in attempt, or refuse it with `SignInThrottled` while the name or
    the address is locked out."""
    rows = _locked_rows(uow, throttle_keys(account=account, address=address))
    now = uow.now()
    settings = uow.settings
    until = [row.locked_until for row in rows if row.locked_until and row.locked_until > now]
    if until:
        raise SignInThrottled(_seconds_until(max(until), now))
    window = timedelta(seconds=settings.login_failure_window_seconds)
    for row in rows:
        if row.attempts == 0 or row.window_started_at + window <= now:
            row.attempts, row.window_started_at, row.locked_until = 0, now, None
        row.attempts += 1
        if row.attempts >= _limit(settings, row.throttled_by):
            row.locked_until = now + timedelta(seconds=settings.login_lockout_seconds)
        row.expires_at = max(row.window_started_at + window, row.locked_until or now)


def login_succeeded(uow: UnitOfWork, *, account: str | None, address: str | None) -> None:
    """The admitted attempt signed in: the name starts afresh, and the address gets its
    attempt back (lifting the lockout that attempt may have started)."""
    settings = uow.settings
    for row in _locked_rows(uow, throttle_keys(account=account, address=address)):
        if row.throttled_by is ThrottledBy.ACCOUNT:
            uow.session.delete(row)
            continue
        row.attempts = max(row.attempts - 1, 0)
        if row.attempts < _limit(settings, row.throttled_by):
            row.locked_until = None


@raises(ValidationFailed, PermissionDenied)
def clear_login_lockout(
    uow: UnitOfWork, actor: Actor, *, account: str | None = None, address: str | None = None
) -> ClearedLoginLockout:
    """An operator forgets the attempts counted against a name, an address or both:
    a lockout on them ends now."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator clears a sign-in lockout")
    account = clean("account", account or "", max_length=_KEY_LENGTH, required=False)
    address = clean("address", address or "", max_length=_KEY_LENGTH, required=False)
    if not account and not address:
        raise ValidationFailed("account", "name an account, an address or both")
    rows = _locked_rows(uow, throttle_keys(account=account, address=address), create=False)
    now = uow.now()
    cleared = [_view(row, now) for row in rows]
    for row in rows:
        uow.session.delete(row)
    return ClearedLoginLockout(account=account or None, address=address or None, cleared=cleared)


def login_lockouts(uow: UnitOfWork) -> list[LoginThrottleView]:
    """The names and addresses locked out now (`hub login list`)."""
    now = uow.now()
    rows = uow.session.scalars(
        select(LoginThrottle)
        .where(LoginThrottle.locked_until > now)
        .order_by(LoginThrottle.throttled_by, LoginThrottle.key)
    )
    return [_view(row, now) for row in rows]


def prune_login_throttles(uow: UnitOfWork) -> int:
    """Delete the counts whose window and lockout have both passed (the server's upkeep)."""
    uow.no_lock_needed(
        "a lapsed count decides nothing; an attempt that renews one meanwhile moves its "
        "expires_at, and PostgreSQL re-checks the condition on the row it waited for"
    )
    gone = uow.session.execute(
        delete(LoginThrottle)
        .where(LoginThrottle.expires_at <= uow.now())
        .returning(LoginThrottle.key)
    )
    return len(gone.all())


# --- the rows -------------------------------------------------------------------------


def _locked_rows(
    uow: UnitOfWork, keys: Iterable[Key], *, create: bool = True
) -> list[LoginThrottle]:
    """The rows of `keys`, locked in order, made first (zero attempts) where missing."""
    keys = list(keys)
    if not keys:
        return []
    if create:
        _insert_missing(uow, keys)
    found = uow.session.scalars(
        select(LoginThrottle)
        .where(tuple_(LoginThrottle.throttled_by, LoginThrottle.key).in_(keys))
        .order_by(LoginThrottle.throttled_by, LoginThrottle.key)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    if create and len(found) < len(keys):
        # The upkeep deleted a lapsed row between the insert and the lock: once more.
        _insert_missing(uow, keys)
        return _locked_rows(uow, keys, create=False)
    return list(found)


def _insert_missing(uow: UnitOfWork, keys: list[Key]) -> None:
    # A new row's times are placeholders (zero attempts start a new window when counted);
    # the operation's instant is read only once the rows are locked.
    placeholder = uow.opened_at
    insert = postgresql_insert if uow.dialect == "postgresql" else sqlite_insert
    for throttled_by, key in keys:
        uow.session.execute(
            insert(LoginThrottle)
            .values(
                throttled_by=throttled_by, key=key, attempts=0,
                window_started_at=placeholder, locked_until=None, expires_at=placeholder,
            )
            .on_conflict_do_nothing()
        )


def _limit(settings: Settings, throttled_by: ThrottledBy) -> int:
    if throttled_by is ThrottledBy.ACCOUNT:
        return settings.login_max_failures_per_account
    return settings.login_max_failures_per_address


def _locked(row: LoginThrottle, now: datetime) -> bool:
    return row.locked_until is not None and row.locked_until > now


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(1, math.ceil((moment - now).total_seconds()))


def _view(row: LoginThrottle, now: datetime) -> LoginThrottleView:
    return view_of(
        LoginThrottleView, row, locked_until=row.locked_until if _locked(row, now) else None
    )
