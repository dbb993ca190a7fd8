import nothere_xyz


def test_never():
    pass
