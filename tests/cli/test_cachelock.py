"""cache_lock: a second process that builds into the same cache folder waits for the first one."""
import subprocess
import sys
import time

from bertl14_tools.cachelock import cache_lock

CHILD = ("import sys; from bertl14_tools.cachelock import cache_lock\n"
         "with cache_lock(sys.argv[1]):\n    print('got it', flush=True)\n")


def test_a_second_process_waits_for_the_lock_and_then_gets_it(tmp_path):
    folder = tmp_path / "image"
    with cache_lock(folder):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(folder)], stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert child.poll() is None, "the second process did not wait for the lock"
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 0 and out.strip() == "got it"
    assert (tmp_path / "image.lock").is_file() and not folder.exists()


def test_the_lock_is_released_by_an_exception(tmp_path):
    folder = tmp_path / "image"
    try:
        with cache_lock(folder):
            raise RuntimeError("a failed build")
    except RuntimeError:
        pass
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder)], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "got it"
