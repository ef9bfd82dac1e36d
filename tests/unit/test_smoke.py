import threading
import gevent.monkey

def test_threading_is_patched():
    assert gevent.monkey.is_module_patched("threading")
