"""SQLAlchemy storage of snapshots and gdpconfig (the only package importing sqlalchemy)."""
