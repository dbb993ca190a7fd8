import pytest

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    print("some captured stdout")
    assert "a" == "b", "strings differ"

@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_errors(broken):
    pass

class TestGroup:
    def test_in_class(self):
        assert True

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False
