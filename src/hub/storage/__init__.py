"""Storage: the SQLAlchemy base, the database engines and the unit of work."""

from hub.storage.base import Base, UTCDateTime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork

__all__ = ["Base", "Database", "UTCDateTime", "UnitOfWork"]
