"""The wheel (python/make_wheel.py): what it holds, its tag against the binary inside, and a
`pip install --no-index` of it into a fresh `python3 -m venv` that then tracks with no other
rtrack anywhere.

Wheels checked: scripts/release.sh's, under RT_PORTABLE_DIR/dist (scripts/test.sh's normal stage:
manylinux2014 x86_64 and aarch64, from the portable binaries the other suites checked), and one
made here from this build's distribution binary (RT_BUILD_RTRACK, else RTRACK), which needs the
distribution's libraries and so is tagged linux_x86_64, for this platform only. The tag is
checked the way auditwheel checks it, independently of make_wheel.py: binutils' objdump for the
symbol versions the binary imports, readelf for the libraries it needs (PEP 599's list).
"""

import base64
import csv
import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import unittest
import zipfile

import pylib

with open(os.path.join(pylib.SRC, "CMakeLists.txt"), encoding="utf-8") as _f:
    VERSION = re.search(r"^project\(rtrack VERSION ([0-9.]+)", _f.read(), re.M).group(1)
MANYLINUX2014_LIBS = {"libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1",
                      "libc.so.6", "libnsl.so.1", "libutil.so.1", "libpthread.so.0",
                      "libresolv.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
ARCHS = {"Advanced Micro Devices X86-64": "x86_64", "AArch64": "aarch64"}
PACKAGE = sorted(f"rtrack/{n}" for n in os.listdir(os.path.join(pylib.PKG, "rtrack"))
                 if n.endswith(".py"))


def tool(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def expected_tag(binary):
    """auditwheel's answer: manylinux2014_ARCH when the binary needs only PEP 599's libraries and
    no glibc symbol version above 2.17 (nor any other library's versions), else linux_ARCH."""
    arch = ARCHS[re.search(r"Machine:\s*(.*)", tool("readelf", "-h", binary)).group(1).strip()]
    needed = set(re.findall(r"\(NEEDED\).*\[(.*)\]", tool("readelf", "-d", binary)))
    versions = set(re.findall(r"\(([A-Z_]+_[0-9.]+)\)", tool("objdump", "-T", binary)))
    glibc = [tuple(map(int, v[6:].split("."))) for v in versions if v.startswith("GLIBC_")]
    ok = (needed <= MANYLINUX2014_LIBS and all(v.startswith("GLIBC_") for v in versions)
          and max(glibc, default=(0,)) <= (2, 17))
    return f"{'manylinux2014' if ok else 'linux'}_{arch}", needed, versions


class Wheels(pylib.TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.wheels = {}  # path -> the binary it was made from
        portable = os.environ.get("RT_PORTABLE_DIR")
        if portable:
            for arch in ("x86_64", "aarch64"):
                w = os.path.join(portable, "dist",
                                 f"rtrack-{VERSION}-py3-none-manylinux2014_{arch}.whl")
                cls.wheels[w] = os.path.join(portable, arch, "rtrack")
        cls.out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"rtrack-wheel.{os.getpid()}")
        distro = os.environ.get("RT_BUILD_RTRACK") or pylib.RTRACK
        made = subprocess.run([sys.executable, os.path.join(pylib.PKG, "make_wheel.py"), distro,
                               cls.out], capture_output=True, text=True, check=False)
        cls.made = made
        if made.returncode == 0:
            cls.wheels[made.stdout.strip()] = distro

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.out], check=False)

    def test_wheels_exist(self):
        self.assertEqual(self.made.returncode, 0, self.made.stderr)
        if not os.environ.get("RT_PORTABLE_DIR"):  # (the asan stage's build, a developer's)
            raise unittest.SkipTest("RT_PORTABLE_DIR is not set: this build checks no release "
                                    "wheels (scripts/test.sh normal does)")
        for w in self.wheels:
            self.assertTrue(os.path.isfile(w), f"{w} was not built (scripts/release.sh)")

    def test_contents_and_tag(self):
        for w, binary in self.wheels.items():
            if not os.path.isfile(w):
                continue
            with self.subTest(wheel=os.path.basename(w)):
                self.check_wheel(w, binary)

    def check_wheel(self, w, binary):
        tag, needed, versions = expected_tag(binary)
        self.assertEqual(os.path.basename(w), f"rtrack-{VERSION}-py3-none-{tag}.whl",
                         f"NEEDED {sorted(needed)}, versions {sorted(versions)}")
        dist, data = f"rtrack-{VERSION}.dist-info", f"rtrack-{VERSION}.data"
        with zipfile.ZipFile(w) as z:
            names = sorted(z.namelist())
            self.assertEqual(names, sorted(PACKAGE + [f"{data}/scripts/rtrack"] + [
                f"{dist}/{n}" for n in ("LICENSE", "METADATA", "RECORD", "WHEEL")]),
                "one binary, the Python files and the dist-info: nothing else")
            with open(binary, "rb") as f:
                self.assertEqual(z.read(f"{data}/scripts/rtrack"), f.read(), "the binary")
            self.assertEqual(z.getinfo(f"{data}/scripts/rtrack").external_attr >> 16 & 0o777,
                             0o755)
            for p in PACKAGE:
                with open(os.path.join(pylib.PKG, p), "rb") as f:
                    self.assertEqual(z.read(p), f.read(), p)
            wheel = z.read(f"{dist}/WHEEL").decode()
            self.assertIn(f"\nTag: py3-none-{tag}\n", wheel)
            self.assertIn("Root-Is-Purelib: false", wheel)
            meta = z.read(f"{dist}/METADATA").decode()
            self.assertIn(f"\nVersion: {VERSION}\n", meta)
            self.assertIn("\nRequires-Python: >=3.9\n", meta)
            rows = list(csv.reader(io.StringIO(z.read(f"{dist}/RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in rows), names)
            for path, digest, size in rows:
                if path.endswith("/RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                body = z.read(path)
                self.assertEqual(digest, "sha256=" + base64.urlsafe_b64encode(
                    hashlib.sha256(body).digest()).rstrip(b"=").decode(), path)
                self.assertEqual(int(size), len(body))

    def test_distro_binary_is_not_manylinux(self):
        # the fallback's tag says what its binary needs: this platform's libraries
        distro = [w for w in self.wheels if "-linux_" in w]
        self.assertEqual(len(distro), 1, self.made.stderr)
        self.assertIn(f"tagged linux_{platform.machine()}, for this platform only",
                      self.made.stderr)
        self.assertEqual(expected_tag(self.wheels[distro[0]])[0], f"linux_{platform.machine()}")

    def test_installs_into_a_fresh_venv(self):
        mine = [w for w in self.wheels if os.path.isfile(w) and w.endswith(
            f"_{platform.machine()}.whl")]
        self.assertTrue(mine)
        for w in mine:
            with self.subTest(wheel=os.path.basename(w)):
                self.install_and_track(w)

    def install_and_track(self, w):
        venv = os.path.join(self.dir, os.path.basename(w) + ".venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
        pip = subprocess.run([f"{venv}/bin/pip", "install", "--no-index", "--no-cache-dir", w],
                             capture_output=True, text=True, check=False)
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        env = {k: v for k, v in os.environ.items() if k not in ("RTRACK_BIN", "PYTHONPATH")}
        env["PATH"] = f"{venv}/bin:/usr/bin:/bin"
        self.assertIsNone(subprocess.run(["sh", "-c", "command -v rtrack"], env=dict(
            env, PATH="/usr/bin:/bin"), capture_output=True, check=False).stdout.strip() or None,
            "an rtrack outside the venv")
        code = f"""
import json, os, time, rtrack
assert rtrack.__file__.startswith({venv!r}), rtrack.__file__
with rtrack.track(interval=0.2, job_name="venv") as t:
    b = bytearray(b"x") * (50 << 20)
    t.wait_for_samples(2, timeout=60)
print(json.dumps({{"bin": rtrack.find_binary(), "stats": t.stats(),
                  "header": t.get_combined_metrics().to_csv().split(chr(10))[0]}}))
"""
        out = subprocess.run([f"{venv}/bin/python", "-c", code], env=dict(env,
                             RTRACK_BIN="/nonexistent/rtrack"), cwd=self.dir,
                             capture_output=True, text=True, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        got = json.loads(out.stdout)
        self.assertEqual(got["bin"], f"{venv}/bin/rtrack", "the wheel's, before RTRACK_BIN")
        self.assertGreaterEqual(got["stats"]["process_memory_mib"]["max"], 50)
        self.assertEqual(got["header"] + "\n", pylib.reference_headers()[2])
        cmd = subprocess.run(["rtrack", "--version"], env=env, capture_output=True, text=True,
                             check=True)
        self.assertEqual(cmd.stdout.split("\n")[0], f"rtrack {VERSION}")
        mod = subprocess.run([f"{venv}/bin/python", "-m", "rtrack", "--version"], env=env,
                             capture_output=True, text=True, check=True, cwd=self.dir)
        self.assertEqual(mod.stdout, cmd.stdout)


if __name__ == "__main__":
    pylib.main()
