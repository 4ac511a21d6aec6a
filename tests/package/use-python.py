"""use-python.py: what a crawler developer does with python3-robotsd once
it is installed: import the client and the Scrapy middleware (from the
installed package only, never from the checkout) and check URLs with the
robotsd at $ROBOTSD_SOCKET (run by with-daemon.py). Prints one line per
result; exits 1 on the first wrong one."""
import os
import sys

import robotsd
from robotsd.scrapy import RobotsdMiddleware

want = os.environ["ROBOTSD_PYTHON_FROM"]
got = os.path.dirname(os.path.dirname(os.path.abspath(robotsd.__file__)))
print("robotsd from", got)
if got != want or RobotsdMiddleware.__module__ != "robotsd.scrapy":
    print("not the installed package: want it from", want)
    sys.exit(1)
with robotsd.Client() as c:
    r = c.check("http://a.test/private/x", "PkgBot/1.0")
    print("private:", r.allowed, r.reason, r.crawl_delay)
    if r.allowed is not False or r.reason != "rule" or r.crawl_delay != 2:
        sys.exit(1)
    r = c.check("http://a.test/public", "PkgBot/1.0")
    print("public:", r.allowed, r.reason)
    if r.allowed is not True:
        sys.exit(1)
