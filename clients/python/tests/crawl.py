"""crawl.py CONFIG.json OUT.json: one real Scrapy crawl (run by
test_scrapy.py with a python3 that has Scrapy) with RobotsdMiddleware in
place of Scrapy's RobotsTxtMiddleware. It follows every link from
CONFIG["start"], with CONFIG["settings"] over its own Scrapy settings, and
writes what it saw to OUT.json: the URLs it got, the crawl's stats, the
delay of each download slot as the responses came in, and the downloader
middlewares the crawl ran with. With CONFIG["items"], the spider yields an
item per page, {"url", "robotsd": response.meta["robotsd"]}, and an item
pipeline appends each, as a JSON line, to the file CONFIG["items"]."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))

import scrapy  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402

cfg = json.load(open(sys.argv[1]))
seen = {"urls": [], "slot_delays": {}, "stats": {}, "middlewares": []}


class SiteSpider(scrapy.Spider):
    name = "site"
    start_urls = [cfg["start"]]

    def parse(self, response):
        seen["urls"].append(response.url)
        key = response.meta.get("download_slot")
        slot = self.crawler.engine.downloader.slots.get(key)
        if slot is not None:
            seen["slot_delays"][key] = slot.delay
        if cfg.get("items"):
            yield {"url": response.url,
                   "robotsd": response.meta.get("robotsd", "absent")}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

    def closed(self, reason):
        seen["stats"] = {k: v for k, v in self.crawler.stats.get_stats()
                         .items() if isinstance(v, (int, float, str))}
        seen["reason"] = reason
        seen["middlewares"] = [
            "%s.%s" % (type(m).__module__, type(m).__name__)
            for m in self.crawler.engine.downloader.middleware.middlewares]


class ItemFile:
    """An item pipeline storing each item as a JSON line."""

    def open_spider(self, spider):
        self.f = open(cfg["items"], "w")

    def close_spider(self, spider):
        self.f.close()

    def process_item(self, item, spider):
        self.f.write(json.dumps(dict(item)) + "\n")
        return item


settings = {
    "ROBOTSTXT_OBEY": False,
    "DOWNLOADER_MIDDLEWARES": {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robotsd.scrapy.RobotsdMiddleware": 100,
    },
    "ROBOTSD_SOCKET": cfg["socket"],
    "USER_AGENT": cfg["user_agent"],
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "CONCURRENT_REQUESTS": 8,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
    "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
}
if cfg.get("items"):
    settings["ITEM_PIPELINES"] = {"__main__.ItemFile": 300}
settings.update(cfg.get("settings", {}))
process = CrawlerProcess(settings)
process.crawl(SiteSpider)
process.start()
with open(sys.argv[2], "w") as f:
    json.dump(seen, f)
