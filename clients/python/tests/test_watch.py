"""Client.watch and AsyncClient.watch against the real robotsd: typed
events of real fetches, a refused request raised, and a watch that
outlives a restart of robotsd (it subscribes again by itself and the next
change still arrives)."""
import asyncio
import queue
import threading
import unittest

from support import ClientTest, poll

from robotsd import (AgentChange, AsyncClient, BadRequestError,
                     ChangeEvent, Client)

A = "http://a.test"
WANT = AgentChange(newly_disallowed=["/private/"],
                   newly_allowed=["/private/open"], usage_changed=False)


class WatchTest(ClientTest):

    def watchers(self):
        return self.stats()["feed_watchers"]

    def fetch_anew(self):
        """Purge a.test and check it: a new entry, a change from none."""
        self.c.call({"op": "purge", "origin": A})
        self.assertIs(self.check(A + "/private/x")["allowed"], False)

    def expect(self, ev, old=None):
        self.assertIsInstance(ev, ChangeEvent)
        v = self.inspect(A)["version"]
        self.assertEqual((ev.origin, ev.old, ev.new, ev.state, ev.agents),
                         (A, old, v, "rules", {"FooBot/1.0": WANT}))

    def test_blocking_watch_survives_a_restart(self):
        self.start()
        events: "queue.Queue[object]" = queue.Queue()
        cl = Client(self.d.socket, timeout=20)

        def run():
            try:
                for ev in cl.watch([A], ["FooBot/1.0"]):
                    events.put(ev)
            except Exception as e:  # noqa: BLE001 (reported below)
                events.put(e)
        threading.Thread(target=run, daemon=True).start()
        self.assertTrue(poll(lambda: self.watchers() == 1))
        self.fetch_anew()
        self.expect(events.get(timeout=20))
        self.restart()
        self.c = self.d.client()
        self.assertTrue(poll(lambda: self.watchers() == 1),
                        "the watch did not subscribe again")
        self.fetch_anew()
        self.expect(events.get(timeout=20))

    def test_async_watch_survives_a_restart(self):
        self.start()

        async def main():
            cl = AsyncClient(self.d.socket, timeout=20)
            it = cl.watch([A], ["FooBot/1.0"])
            first = asyncio.ensure_future(it.__anext__())
            while await asyncio.to_thread(self.watchers) != 1:
                await asyncio.sleep(0.02)
            await asyncio.to_thread(self.fetch_anew)
            got = [await asyncio.wait_for(first, 20)]
            await asyncio.to_thread(self.restart)
            self.c = self.d.client()
            nxt = asyncio.ensure_future(it.__anext__())
            while await asyncio.to_thread(self.watchers) != 1:
                await asyncio.sleep(0.02)
            await asyncio.to_thread(self.fetch_anew)
            got.append(await asyncio.wait_for(nxt, 20))
            await it.aclose()
            return got
        for ev in asyncio.run(main()):
            self.expect(ev)

    def test_refused_watch_raises(self):
        self.start()
        with self.assertRaises(BadRequestError):
            next(iter(Client(self.d.socket).watch(agents=[""])))

        async def main():
            it = AsyncClient(self.d.socket).watch(agents=["a\tb"])
            await it.__anext__()
        with self.assertRaises(BadRequestError):
            asyncio.run(main())


if __name__ == "__main__":
    unittest.main()
