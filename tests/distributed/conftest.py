def pytest_configure(config):
    config.addinivalue_line("markers", "slow: the real-model runs; nox -s distributed runs them")
