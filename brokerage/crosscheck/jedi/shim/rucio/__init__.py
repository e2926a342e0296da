"""Offline stand-in for the rucio client package (only what pandajedi imports).

rucio.client.Client is replaced by fakes.FakeRucioClient at run time.
"""
