# Filesystem operations a workload may try, one per argument "op:path[:path2]";
# prints "op path OK" or "op path ERRNAME" per line. Used by observe.test.ts.
import errno, os, sys

def run(op, a, b):
    if op == "append":
        with open(a, "a") as f: f.write("x")
    elif op == "create":
        os.close(os.open(a, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    elif op == "trunc":
        os.close(os.open(a, os.O_WRONLY | os.O_TRUNC))
    elif op == "mkdir":
        os.mkdir(a)
    elif op == "rename":
        os.rename(a, b)
    elif op == "chmod":
        os.chmod(a, 0o777)
    elif op == "unlink":
        os.unlink(a)
    elif op == "rmdir":
        os.rmdir(a)
    elif op == "symlink":
        os.symlink("/etc/passwd", a)
    elif op == "link":
        os.link(a, b)
    elif op == "utime":
        os.utime(a, (0, 0))
    elif op == "mkfifo":
        os.mkfifo(a)
    else:
        raise SystemExit("unknown op " + op)

for arg in sys.argv[1:]:
    op, a, *rest = arg.split(":")
    try:
        run(op, a, rest[0] if rest else None)
        print(op, a, "OK")
    except OSError as e:
        print(op, a, errno.errorcode.get(e.errno, str(e.errno)))
