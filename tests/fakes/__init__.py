"""Fakes of outside services that tests and benchmarks talk to over real sockets.

`tests.fakes.forge.FakeForge` serves the GitHub REST and Gitee API v5 shapes on 127.0.0.1.
"""
