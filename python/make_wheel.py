#!/usr/bin/env python3
"""make_wheel.py - the rtrack wheel: the Python package (python/rtrack) and one rtrack binary.

usage: python3 python/make_wheel.py BINARY OUTDIR

Writes OUTDIR/rtrack-VERSION-py3-none-TAG.whl holding rtrack/*.py, the binary as
rtrack-VERSION.data/scripts/rtrack (pip installs it as the `rtrack` command beside the
environment's python), and the dist-info (METADATA, WHEEL, LICENSE, RECORD): nothing else.

TAG is decided from the binary, as auditwheel does (PEP 599): manylinux2014_ARCH when every
library it needs is one manylinux2014 allows and no symbol version it needs is newer than that
policy's (GLIBC_2.17, GCC_4.8.0), which scripts/release.sh's portable binary is built for;
otherwise linux_ARCH, for this platform only (a distribution's build, which needs its own
glibc and libraries), with the reason on stderr. ARCH is the binary's ELF machine. The ELF facts
come from binutils' readelf. The file dates are SOURCE_DATE_EPOCH's (default: 1980), so the
same inputs give the same bytes. Standard library only.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# PEP 599's manylinux2014 policy: the libraries a wheel may need from the system (the dynamic
# loader besides), and the newest symbol version of each versioned namespace
MANYLINUX2014_LIBS = {
    "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6",
    "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libX11.so.6",
    "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
}
MANYLINUX2014_VERSIONS = {"GLIBC": (2, 17), "GCC": (4, 8, 0), "GLIBCXX": (3, 4, 19),
                          "CXXABI": (1, 3, 7)}
LOADERS = {"x86_64": "ld-linux-x86-64.so.2", "aarch64": "ld-linux-aarch64.so.1"}
MACHINES = {"Advanced Micro Devices X86-64": "x86_64", "AArch64": "aarch64"}


def die(msg):
    sys.stderr.write(f"make_wheel.py: {msg}\n")
    sys.exit(1)


def readelf(args, binary):
    try:
        out = subprocess.run(["readelf", "--wide", *args, binary], capture_output=True,
                             check=True)
    except FileNotFoundError:
        die("readelf is missing (binutils)")
    except subprocess.CalledProcessError as e:
        die(f"readelf {' '.join(args)} {binary}: {e.stderr.decode().strip()}")
    return out.stdout.decode("utf-8", "replace")


def elf_facts(binary):
    """(arch, needed libraries, {library: [symbol versions it needs]})."""
    m = re.search(r"^\s*Machine:\s*(.*?)\s*$", readelf(["-h"], binary), re.M)
    arch = MACHINES.get(m.group(1) if m else "")
    if arch is None:
        die(f"{binary}: not an x86_64 or aarch64 ELF executable")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", readelf(["-d"], binary))
    versions, lib = {}, None
    in_needs = False
    for line in readelf(["-V"], binary).splitlines():
        if line.startswith("Version needs section"):
            in_needs = True
        elif line.startswith("Version") and "section" in line:
            in_needs = False
        f = re.search(r"File: (\S+)", line)
        n = re.search(r"Name: (\S+)", line)
        if in_needs and f:
            lib = f.group(1)
            versions.setdefault(lib, [])
        elif in_needs and n and lib:
            versions[lib].append(n.group(1))
    return arch, needed, versions


def manylinux2014_problems(arch, needed, versions):
    """What keeps the binary from manylinux2014: [] when nothing does."""
    bad = [f"it needs {lib}, which manylinux2014 does not allow" for lib in needed
           if lib not in MANYLINUX2014_LIBS and lib != LOADERS[arch]]
    for lib, names in versions.items():
        for v in names:
            ns, _, num = v.partition("_")
            limit = MANYLINUX2014_VERSIONS.get(ns)
            if limit is None:
                bad.append(f"it needs symbol version {v} of {lib}, outside manylinux2014")
            elif tuple(int(x) for x in re.findall(r"\d+", num)) > limit:
                bad.append(f"it needs {v} of {lib}, newer than manylinux2014's "
                           f"{ns}_{'.'.join(map(str, limit))}")
    return bad


def wheel_tag(binary):
    arch, needed, versions = elf_facts(binary)
    problems = manylinux2014_problems(arch, needed, versions)
    if problems:
        sys.stderr.write(f"make_wheel.py: {binary} is not manylinux2014 ({problems[0]}"
                         f"{'; and more' if len(problems) > 1 else ''}): tagged linux_{arch}, "
                         "for this platform only\n")
        return f"linux_{arch}"
    return f"manylinux2014_{arch}"


def versions_agree():
    ns = {}
    with open(os.path.join(HERE, "rtrack", "_version.py"), encoding="utf-8") as f:
        exec(f.read(), ns)  # noqa: S102 (our own file: one assignment)
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"^project\(rtrack VERSION ([0-9.]+)", f.read(), re.M)
    if not m or m.group(1) != ns["__version__"]:
        die(f"python/rtrack/_version.py says {ns['__version__']}, CMakeLists.txt "
            f"{m.group(1) if m else 'nothing'}: make them agree")
    return ns["__version__"]


def metadata(version):
    return (f"Metadata-Version: 2.1\nName: rtrack\nVersion: {version}\n"
            "Summary: rtrack, a Linux resource tracker for batch jobs: record this Python "
            "process with it, read the run back in the Python resource-tracker's shapes\n"
            "License: MIT\nRequires-Python: >=3.9\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Programming Language :: Python :: 3\n"
            "Description-Content-Type: text/markdown\n\n"
            "The rtrack binary, and the Python package that drives it from inside a program: "
            "`with rtrack.track() as t: ...`, then `t.stats()`, `t.recommend_resources()`, "
            "`t.report().save(\"report.html\")`. See docs/python.md in rtrack's sources.\n")


def build(binary, outdir):
    version = versions_agree()
    tag = f"py3-none-{wheel_tag(binary)}"
    dist, data = f"rtrack-{version}.dist-info", f"rtrack-{version}.data"
    pkg = os.path.join(HERE, "rtrack")
    with open(binary, "rb") as f:
        files = [(f"{data}/scripts/rtrack", f.read(), 0o755)]
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                files.append((f"rtrack/{name}", f.read(), 0o644))
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        license_text = f.read()
    files += [(f"{dist}/METADATA", metadata(version).encode(), 0o644),
              (f"{dist}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: rtrack make_wheel.py\n"
                                 f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), 0o644),
              (f"{dist}/LICENSE", license_text, 0o644)]
    record = "".join(
        f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()}"
        f",{len(b)}\n" for p, b, _ in files) + f"{dist}/RECORD,,\n"
    files.append((f"{dist}/RECORD", record.encode(), 0o644))
    epoch = max(315532800, int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))
    date = time.gmtime(epoch)[:6]
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, f"rtrack-{version}-{tag}.whl")
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body, mode in files:
            zi = zipfile.ZipInfo(name, date)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, body)
    os.replace(tmp, path)
    return path


def main(argv):
    if len(argv) != 3 or argv[1].startswith("-"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    binary, outdir = argv[1], argv[2]
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        die(f"{binary} is not an executable file (the rtrack binary to put in the wheel)")
    print(build(binary, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
