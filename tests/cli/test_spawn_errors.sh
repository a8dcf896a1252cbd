#!/usr/bin/env bash
# rtrack run: a command that cannot start says why, naming the file and what is wrong with it
# (as shells do), with the documented exit codes: 127 when it (or the interpreter or loader it
# needs) is not found, 126 when it is found but cannot be executed.
. "$(dirname "$0")/lib.sh" "$1"

# run_job NAME ARGS...: rtrack run ARGS; RC, and stderr in NAME.err
run_job() {
    local name=$1
    shift
    "$RTRACK" run --db spawn.db "$@" >"$name.out" 2>"$name.err" </dev/null
    RC=$?
}
last() { q spawn.db "SELECT $1 FROM runs ORDER BY id DESC LIMIT 1"; }

# --- not found at all: unchanged
run_job nf -- rtrack-no-such-command-xyz
check "not found: exit 127, message" "$RC:$(cat nf.err)" \
    "127:rtrack: cannot run 'rtrack-no-such-command-xyz': command not found"
run_job nfp -- ./no-such-file
check "./path not found: exit 127, message" "$RC:$(cat nfp.err)" \
    "127:rtrack: cannot run './no-such-file': command not found"

# --- a script whose interpreter is missing: 127, naming the interpreter
printf '#!/no/such/interpreter -x\necho ran >ran.marker\n' >missing.sh
chmod 755 missing.sh
run_job mi -- ./missing.sh
check "missing interpreter: exit 127" "$RC" 127
check "missing interpreter: names the script and the interpreter" "$(cat mi.err)" \
    "rtrack: cannot run './missing.sh': its interpreter '/no/such/interpreter' was not found"
check "missing interpreter: runs row" "$(last "exit_code || ',' || end_reason")" "127,spawn-failed"
# found on PATH: the message says where
mkdir bin
cp missing.sh bin/rt-missing-interp
PATH=$T/bin:$PATH run_job mip -- rt-missing-interp arg
check "missing interpreter, found on PATH: exit 127" "$RC" 127
check "missing interpreter, found on PATH: says where" "$(cat mip.err)" \
    "rtrack: cannot run 'rt-missing-interp': its interpreter '/no/such/interpreter' was not found (the command is $T/bin/rt-missing-interp)"
printf '#!\n' >empty.sh
chmod 755 empty.sh
run_job em -- ./empty.sh
check "a '#!' line without an interpreter: exit 126 or 127, says so" \
    "$(sed 's/^rtrack: cannot run .\.\/empty\.sh.: //' em.err)" "its '#!' line names no interpreter"

# --- a file without a '#!' line that is not a binary: 126, saying so
printf 'echo ran >ran.marker\n' >noshebang.sh
chmod 755 noshebang.sh
run_job ns -- ./noshebang.sh
check "no '#!' line: exit 126" "$RC" 126
check "no '#!' line: says so" "$(cat ns.err)" \
    "rtrack: cannot run './noshebang.sh': it is not a binary and has no '#!' line naming its interpreter (exec format error): add one (e.g. '#!/bin/sh') or run it with its interpreter ('sh ./noshebang.sh')"
check "no '#!' line: it did not run" "$([ -e ran.marker ] && echo ran || echo no)" no
# a binary of another machine (an ELF header with a foreign machine and nothing else)
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\002\000\377\377\001\000\000\000' >foreign
head -c 200 /dev/zero >>foreign
chmod 755 foreign
run_job fo -- ./foreign
check "foreign binary: exit 126, says so" "$RC:$(cat fo.err)" \
    "126:rtrack: cannot run './foreign': it is a binary this system cannot run (exec format error)"

# --- a binary whose dynamic loader is missing: 127, naming the loader
if command -v python3 >/dev/null && [ -x /bin/true ]; then
    python3 - /bin/true noloader <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
if data[:5] != b"\x7fELF\x02":
    sys.exit(0)  # not a 64-bit ELF: the check below is skipped
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
for i in range(phnum):
    off = phoff + i * phentsize
    ptype, = struct.unpack_from("<I", data, off)
    if ptype == 3:  # PT_INTERP: rename the loader
        ioff, = struct.unpack_from("<Q", data, off + 8)
        isz, = struct.unpack_from("<Q", data, off + 32)
        name = b"/no/such/ld.so"
        data[ioff:ioff + isz] = name + b"\0" * (isz - len(name))
        open(sys.argv[2], "wb").write(data)
EOF
fi
if [ -s noloader ]; then
    chmod 755 noloader
    run_job nl -- ./noloader
    check "missing loader: exit 127, names it" "$RC:$(cat nl.err)" \
        "127:rtrack: cannot run './noloader': its loader '/no/such/ld.so' was not found (a binary built for another system?)"
else
    skip "missing loader: /bin/true is not a dynamically linked 64-bit ELF"
fi

# --- not executable: 126 as before, and a directory says so
printf '#!/bin/sh\necho ran >ran.marker\n' >noexec.sh
chmod 644 noexec.sh
run_job ne -- ./noexec.sh
check "not executable: exit 126, message" "$RC:$(cat ne.err)" \
    "126:rtrack: cannot run './noexec.sh': permission denied"
mkdir adir
run_job dir -- ./adir
check "a directory: exit 126, says so" "$RC:$(cat dir.err)" "126:rtrack: cannot run './adir': it is a directory"
# a script whose interpreter is not executable
printf '#!%s/noexec.sh\necho ran >ran.marker\n' "$T" >viaexec.sh
chmod 755 viaexec.sh
run_job ve -- ./viaexec.sh
check "interpreter not executable: exit 126, names it" "$RC:$(cat ve.err)" \
    "126:rtrack: cannot run './viaexec.sh': its interpreter '$T/noexec.sh' cannot be executed: permission denied"

finish
