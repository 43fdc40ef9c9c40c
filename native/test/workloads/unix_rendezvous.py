# Two leases meeting through a file in a shared directory.
#   serve <path>: bind a unix socket at <path> (0777), accept one peer, print what it sent
#   connect <path>: connect to <path> and send "hello from the other lease"
#   fifo <path>: mkfifo <path>
# Errors print "<ACTION> <ERRNAME>".
import errno, os, socket, sys

mode, path = sys.argv[1], sys.argv[2]
def err(what, e):
    print(what, errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
if mode == "fifo":
    try:
        os.mkfifo(path, 0o666)
        print("MKFIFO OK")
    except OSError as e:
        err("MKFIFO", e)
    sys.exit(0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
if mode == "serve":
    try:
        s.bind(path)
    except OSError as e:
        err("BIND", e)
    os.chmod(path, 0o777)
    s.listen(1)
    s.settimeout(20)
    c, _ = s.accept()
    print("GOT", c.recv(100).decode())
else:
    try:
        s.connect(path)
    except OSError as e:
        err("CONNECT", e)
    s.sendall(b"hello from the other lease")
    print("SENT")
