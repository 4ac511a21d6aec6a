"""scrapy_crawl.py: one crawl of the Scrapy benchmark (bench/scrapy-bench.sh).

usage: scrapy_crawl.py stock|robotsd STARTS PROXY SOCKET OUT

Crawls from every URL of the file STARTS (one a line), following every
link of each page, through the HTTP proxy PROXY (the local origin: every
host is served there). "stock" obeys robots.txt with Scrapy's own
RobotsTxtMiddleware (Protego), "robotsd" with robotsd.scrapy.
RobotsdMiddleware asking the robotsd at SOCKET; every other setting is the
same. Prints "pages=N secs=S rate=R robots_requests=N" (pages: responses
parsed, robots.txt not counted; secs: from the spider's opening to its
closing) and writes the sorted URLs of the pages to OUT.
"""
import os
import sys
import time

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess

mode, starts, proxy, sock, out = sys.argv[1:6]
os.environ["http_proxy"] = proxy  # HttpProxyMiddleware reads it at start
seen = {"urls": [], "t0": 0.0, "t1": 0.0, "robots": 0}


class SiteSpider(scrapy.Spider):
    """Every link of every page."""

    name = "bench"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signals.spider_opened)
        return spider

    def start_requests(self):
        with open(starts) as f:
            for url in f.read().split():
                yield scrapy.Request(url, self.parse)

    def opened(self, spider):
        seen["t0"] = time.monotonic()

    def parse(self, response):
        seen["urls"].append(response.url)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

    def closed(self, reason):
        seen["t1"] = time.monotonic()
        seen["robots"] = self.crawler.stats.get_value(
            "robotstxt/request_count", 0)


settings = {
    "USER_AGENT": "benchbot/1.0",
    "ROBOTSTXT_OBEY": mode == "stock",
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "RETRY_ENABLED": False,
    "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
}
if mode == "robotsd":
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "clients", "python"))
    settings["DOWNLOADER_MIDDLEWARES"] = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robotsd.scrapy.RobotsdMiddleware": 100,
    }
    settings["ROBOTSD_SOCKET"] = sock
process = CrawlerProcess(settings)
process.crawl(SiteSpider)
process.start()
secs = seen["t1"] - seen["t0"]
with open(out, "w") as f:
    f.write("".join(u + "\n" for u in sorted(seen["urls"])))
print("pages=%d secs=%.3f rate=%.1f robots_requests=%d" % (
    len(seen["urls"]), secs, len(seen["urls"]) / secs, seen["robots"]))
