// SPDX-License-Identifier: GPL-2.0
// Load latsplit reports in Debian's chromium (playwright-core, no browser
// download) and print one JSON line per file: console errors and page
// errors, the plots in the DOM, the CDF markers, the body's colours under
// prefers-color-scheme light and dark, the number of distinct colours of a
// screenshot (PNG decoded here with zlib) and the time to load and lay out;
// also what a hostile document could inject (dialogs, img/script/iframe
// elements, on* attributes), the sections, each CDF's lines and legend as
// drawn (colour and dash) and the colours printed under a dark preference.
// usage: node browse.js [--shot DIR] FILE.html...
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { chromium } = require('playwright-core');

// Distinct RGB colours of an 8-bit RGB or RGBA, non-interlaced PNG.
function pngColours(buf) {
  let pos = 8, w = 0, h = 0, ct = 0, bd = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') { w = data.readUInt32BE(0); h = data.readUInt32BE(4); bd = data[8]; ct = data[9]; }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  if (bd !== 8 || (ct !== 2 && ct !== 6)) throw new Error(`PNG colour type ${ct}/${bd} not handled`);
  const bpp = ct === 6 ? 4 : 3, stride = w * bpp, raw = zlib.inflateSync(Buffer.concat(idat));
  const out = Buffer.alloc(stride * h), colours = new Set();
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[y * stride + x - bpp] : 0, b = y ? out[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y ? out[(y - 1) * stride + x - bpp] : 0;
      let v = line[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      out[y * stride + x] = v & 255;
    }
    for (let x = 0; x < w; x++) colours.add(out.readUIntBE(y * stride + x * bpp, 3));
  }
  return { width: w, height: h, colours: colours.size };
}

(async () => {
  const args = process.argv.slice(2);
  let shotDir = null;
  if (args[0] === '--shot') { shotDir = args[1]; args.splice(0, 2); }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    for (const file of args) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors = [], requests = [], dialogs = [];
      page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
      page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`); });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
      const t0 = Date.now();
      await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
      const layout = await page.evaluate(() => document.body.getBoundingClientRect().height);
      const ms = Date.now() - t0;
      const dom = await page.evaluate(() => {
        const plots = {};
        for (const f of document.querySelectorAll('figure.plot')) plots[f.dataset.plot] = (plots[f.dataset.plot] || 0) + 1;
        const marks = [...document.querySelectorAll('.mark')].map((m) => ({ series: m.dataset.series, doc: +m.dataset.doc, q: +m.dataset.q, value: +m.dataset.value }));
        const titled = [...document.querySelectorAll('figure.plot')].every((f) => f.querySelector('svg .title') && f.querySelector('figcaption') && f.querySelector('figcaption').textContent.length > 40);
        const labelled = [...document.querySelectorAll('figure.plot')].every((f) => f.dataset.plot === 'heatmap' || f.querySelectorAll('svg .label').length >= 1);
        const verdict = [...document.querySelectorAll('rect.cell.verdict')].map((c) => ({ host: c.dataset.host, cpu: +c.dataset.cpu, stage: c.dataset.stage }));
        const tables = document.querySelectorAll('table[data-ab]').length;
        const injected = [...document.querySelectorAll('*')]
          .filter((e) => ['IMG', 'SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'foreignObject'].includes(e.tagName) ||
                         [...e.attributes].some((a) => a.name.startsWith('on'))).map((e) => e.outerHTML.slice(0, 80));
        const sections = [...document.querySelectorAll('section.doc')].map((sec) => ({
          kind: sec.dataset.kind, docs: +sec.dataset.docs, failed: sec.dataset.failed === '1',
          title: sec.querySelector('h2').textContent, text: sec.textContent.slice(0, 200000) }));
        const cdfs = [...document.querySelectorAll('figure[data-plot=cdf]')].map((f) => {
          const lg = f.nextElementSibling && f.nextElementSibling.matches('ul.legend') ? f.nextElementSibling : null;
          return {
            lines: [...f.querySelectorAll('path.line')].map((p) => { const c = getComputedStyle(p); return { series: p.dataset.series, stroke: c.stroke, dash: c.strokeDasharray }; }),
            legend: lg ? [...lg.querySelectorAll('li')].map((li) => { const c = getComputedStyle(li.querySelector('.sw')); return { label: li.textContent, color: c.color, bg: c.backgroundImage, w: c.width }; }) : [],
          };
        });
        const warnings = [...document.querySelectorAll('ul.warnings li')].map((li) => li.textContent);
        const alone = [...document.querySelectorAll('p.alone + ul li')].map((li) => li.textContent);
        return { svgs: document.querySelectorAll('svg').length, plots, marks, titled, labelled, verdict, tables,
                 injected, sections, cdfs, warnings, alone };
      });
      const style = async (scheme) => {
        await page.emulateMedia({ colorScheme: scheme });
        return page.evaluate(() => {
          const b = getComputedStyle(document.body), line = document.querySelector('.line');
          return { bg: b.backgroundColor, fg: b.color, line: line ? getComputedStyle(line).stroke : null };
        });
      };
      const light = await style('light'), dark = await style('dark');
      await page.emulateMedia({ colorScheme: 'light' });
      const png = await page.screenshot({ fullPage: false });
      if (shotDir) fs.writeFileSync(path.join(shotDir, path.basename(file) + '.png'), png);
      await page.emulateMedia({ media: 'print' });
      const print = await page.evaluate(() => getComputedStyle(document.querySelector('.row') || document.body).gridTemplateColumns || '');
      await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
      const printDark = await page.evaluate(() => {
        const b = getComputedStyle(document.body), line = document.querySelector('.line');
        const sw = document.querySelector('.sw');
        return { bg: b.backgroundColor, fg: b.color, line: line ? getComputedStyle(line).stroke : null,
                 sw: sw ? getComputedStyle(sw).color : null };
      });
      await page.emulateMedia({ media: 'screen', colorScheme: 'light' });
      light.sw = await page.evaluate(() => { const sw = document.querySelector('.sw'); return sw ? getComputedStyle(sw).color : null; });
      console.log(JSON.stringify({ file, ms, layout, errors, requests, dialogs, ...dom, light, dark, print, printDark, shot: pngColours(png) }));
      await page.close();
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e.stack || String(e)); process.exit(2); });
