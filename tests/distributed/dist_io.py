"""Extern fns of the data-parallel test programs (tests/distributed/*.qv)."""


def save_model(m, stem: str, rank: int) -> None:
    m.save(f"{stem}.rank{rank}.pt")
