import pytest


@pytest.fixture
def bad_teardown():
    yield 1
    raise RuntimeError("teardown broke")


def test_passes_but_teardown(bad_teardown):
    pass


def test_fails_and_teardown(bad_teardown):
    assert bad_teardown == 2


def test_plain():
    pass
