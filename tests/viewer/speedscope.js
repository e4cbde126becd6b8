// SPDX-License-Identifier: MIT
// speedscope.js PROFILE=NAME,NAME,!ABSENT ... - load each PROFILE (Chrome
// JSON or folded stacks) into speedscope (the npm package's self-contained
// page) in headless Chromium, switch to the Sandwich view (key '3': a table
// of every function), and check that each NAME appears in the rendered
// page's text and no !ABSENT does (so the check can fail). One browser for
// all; served over a local HTTP server (no file:// fetch). Exit 0 when all
// pass, 1 when one fails or speedscope reports an error, 77 when Chromium
// cannot start (the caller skips).
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const jobs = process.argv.slice(2).map((a) => {
  const eq = a.lastIndexOf('=');
  const want = a.slice(eq + 1).split(',');
  return { file: a.slice(0, eq), names: want.filter((n) => n[0] !== '!'),
           absent: want.filter((n) => n[0] === '!').map((n) => n.slice(1)) };
});
let profile = null;
const here = __dirname;
let puppeteer;
try {
  puppeteer = require(path.join(here, 'node_modules', 'puppeteer-core'));
} catch (e) {
  console.log('SKIP: puppeteer-core is not installed (npm ci in tests/viewer)');
  process.exit(77);
}
const root = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                '.wasm': 'application/wasm', '.json': 'application/json' };

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  const file = url === '/profile' ? profile : path.join(root, path.normalize(url));
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});

async function main() {
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const port = server.address().port;
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      timeout: 60000,
    });
  } catch (e) {
    console.log('SKIP: Chromium cannot start: ' + String(e.message).split('\n')[0]);
    return 77;
  }
  let rc = 0;
  try {
    for (const job of jobs) {
      profile = job.file;
      const r = await check(browser, port, job);
      if (r)
        rc = r;
    }
  } finally {
    await browser.close();
  }
  return rc;
}

async function check(browser, port, job) {
  const page = await browser.newPage();
  const name = path.basename(job.file);
  await page.setViewport({ width: 1600, height: 1000 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=` +
                  encodeURIComponent(`http://127.0.0.1:${port}/profile?` + name) +
                  '&title=fdrtrace', { waitUntil: 'load', timeout: 60000 });
  // Loaded when the flame chart's canvas is up; then the Sandwich table.
  await page.waitForSelector('canvas', { timeout: 60000 });
  await page.keyboard.press('3');
  let text = '';
  for (let i = 0; i < 60; i++) {
    text = await page.evaluate(() => document.body.innerText);
    if (job.names.every((n) => text.includes(n)))
      break;
    await new Promise((ok) => setTimeout(ok, 500));
  }
  await page.close();
  const missing = job.names.filter((n) => !text.includes(n));
  const extra = job.absent.filter((n) => text.includes(n));
  if (/Something went wrong|Unrecognized format/i.test(text) || missing.length || extra.length) {
    console.log('FAIL: ' + name + ': missing ' + JSON.stringify(missing) + ', present ' +
                JSON.stringify(extra) + (errors.length ? '; page errors: ' + errors.join('; ') : ''));
    console.log(text.slice(0, 2000));
    return 1;
  }
  console.log('ok   ' + name + ': ' + job.names.join(', ') + ' on the page' +
              (job.absent.length ? '; not ' + job.absent.join(', ') : ''));
  return 0;
}

main().then((rc) => { server.close(); process.exit(rc); },
            (e) => { console.log('FAIL: ' + e); server.close(); process.exit(1); });
