/** The publisher's content checks: markup under any label, and image signatures. */
import assert from "node:assert/strict";
import { contentProblem, looksLikeMarkup } from "../../src/aws/sniff.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("markup is recognised after whitespace and a BOM, by the WHATWG HTML patterns", () => {
  for (
    const s of [
      "<!DOCTYPE html><p>",
      "\ufeff  <html>",
      "\n\t<script src=x>",
      "<a href='x'>",
      "<B>bold</B>",
      "<!-- c -->",
      "<?xml version='1.0'?>",
      "<svg xmlns='http://www.w3.org/2000/svg'>",
      "<svg>",
    ]
  ) {
    assert.ok(looksLikeMarkup(text(s)), s);
  }
  for (const s of ['{"a": "<html>"}', "<abc>", "plain text", "<bx>", "", "<"]) {
    assert.ok(!looksLikeMarkup(text(s)), s);
  }
});

Deno.test("image and PDF types must carry their signature; other types are not checked", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2]);
  assert.equal(contentProblem("image/png", png), undefined);
  assert.match(contentProblem("image/jpeg", png)!, /not a JPEG image/);
  assert.equal(contentProblem("image/jpeg", new Uint8Array([0xff, 0xd8, 0xff, 0xe0])), undefined);
  assert.equal(contentProblem("image/gif", text("GIF89a....")), undefined);
  assert.equal(contentProblem("image/webp", text("RIFF\0\0\0\0WEBPVP8 ")), undefined);
  assert.match(contentProblem("image/webp", text("RIFF\0\0\0\0WAVE")) ?? "", /not a WebP image/);
  assert.equal(contentProblem("application/pdf", text("%PDF-1.7")), undefined);
  assert.equal(contentProblem("application/json", text("{}")), undefined);
  assert.match(contentProblem("text/plain", text("<html>")) ?? "", /markup/);
});
