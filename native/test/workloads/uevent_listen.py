# Binds a NETLINK_KOBJECT_UEVENT socket to the kernel's broadcast group, says
# so by creating <dir>/bound, and counts what it hears until <dir>/done
# appears. Prints "SOCKET <errno>" when the socket is refused, else "HEARD <n>".
import errno, os, socket, sys, time

d = sys.argv[1]
try:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)  # NETLINK_KOBJECT_UEVENT
    s.bind((0, 1))
except OSError as e:
    print("SOCKET", errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
open(os.path.join(d, "bound"), "w").close()
s.settimeout(0.2)
heard = 0
give_up = time.monotonic() + 30
while time.monotonic() < give_up:
    try:
        s.recv(65536)
        heard += 1
    except socket.timeout:
        if os.path.exists(os.path.join(d, "done")):
            break
print("HEARD", heard)
