-- Unit tests of postern.lua's path canonicalisation (the dataplane README's "Paths: one canonical form"), run by
-- busted under Lua 5.1 (LuaJIT's dialect) from lua-spec.test.ts. The module is loaded outside nginx: only its pure
-- functions are exercised here; tests against real nginx are in http-instance.integration.test.ts.

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. package.path
rawset(_G, "ngx", { shared = {} })
local postern = require("postern")
local canonical, within = postern.canonical_path, postern.within

local function form(raw)
  local strict, loose = canonical(raw)
  return { strict, loose }
end

describe("canonical_path", function()
  it("keeps a plain path as it is and folds only its loose form", function()
    assert.same({ "/", "/" }, form("/"))
    assert.same({ "/a/B.c/d-e_f~g", "/a/b.c/d-e_f~g" }, form("/a/B.c/d-e_f~g"))
    assert.same({ "/Api/", "/api" }, form("/Api/"))
  end)

  it("resolves dot segments, merges slashes and keeps a trailing slash", function()
    assert.same({ "/x/y/z", "/x/y/z" }, form("/x/./y//z"))
    assert.same({ "/x", "/x" }, form("/adm/../x"))
    assert.same({ "/x/", "/x" }, form("/x/."))
    assert.same({ "/x/", "/x" }, form("/x/y/.."))
    assert.same({ "/", "/" }, form("//"))
    assert.same({ "/adm", "/adm" }, form("/x/%2e%2E/adm"))
    assert.same({ "/adm", "/adm" }, form("/./adm"))
  end)

  it("decodes unreserved characters, upper-cases other encodings and keeps plain sub-delims as sent", function()
    assert.same({ "/adm", "/adm" }, form("/ad%6d"))
    assert.same({ "/~user/A%2C", "/~user/a," }, form("/%7Euser/%41%2c"))
    assert.same({ "/a,b;v=1/c", "/a,b/c" }, form("/a,b;v=1/c"))
    assert.same({ "/a%20b", "/a b" }, form("/a%20b"))
    assert.same({ "/a%7Cb%22", "/a|b\"" }, form("/a|b\""))
    assert.same({ "/caf%C3%A9", "/caf\195\169" }, form("/caf%c3%a9"))
    assert.same({ "/caf%C3%A9", "/caf\195\169" }, form("/caf\195\169"))
    assert.same({ "/%F0%9F%99%82", "/\240\159\153\130" }, form("/%f0%9f%99%82"))
    assert.same({ "/100%25", "/100%" }, form("/100%25"))
    assert.same({ "/a%3Bb", "/a" }, form("/a%3bb"))
  end)

  it("gives the loose form of what lenient backends make of a segment", function()
    -- `;` parameters (Tomcat, Jetty, Spring), NTFS streams, a decoded `?` or `#`.
    assert.same({ "/adm;x/y", "/adm/y" }, form("/adm;x/y"))
    assert.same({ "/adm::$DATA", "/adm" }, form("/adm::$DATA"))
    assert.same({ "/adm%3Fx", "/adm" }, form("/adm%3fx"))
    assert.same({ "/adm%23x", "/adm" }, form("/adm%23x"))
    -- Trailing dots and spaces (Windows), letter case (IIS).
    assert.same({ "/ADM.%20.", "/adm" }, form("/ADM.%20."))
    -- A segment with nothing before its parameter is no segment to them.
    assert.same({ "/;jsessionid=1/adm", "/adm" }, form("/;jsessionid=1/adm"))
    -- Look-alikes: fullwidth letters, long s, Kelvin sign, dotless and dotted i, the one dot leader.
    assert.same("/adm", select(2, canonical("/%ef%bd%81dm")))
    assert.same("/adm", select(2, canonical("/%EF%BC%A1%EF%BC%A4%EF%BC%AD")))
    assert.same("/skip", select(2, canonical("/%c5%bfkip")))
    assert.same("/skip", select(2, canonical("/s%e2%84%aaip")))
    assert.same("/skip", select(2, canonical("/sk%c4%b1p")))
    assert.same("/skip", select(2, canonical("/SK%C4%B0P")))
    assert.same("/adm", select(2, canonical("/adm%e2%80%a4")))
  end)

  local refused = {
    { "", "not an absolute path" },
    { "adm", "not an absolute path" },
    { "*", "not an absolute path" },
    { "/..", "above the root" },
    { "/%2e%2e/adm", "above the root" },
    { "/a/../../adm", "above the root" },
    { "/adm%", "malformed percent-encoding" },
    { "/adm%2", "malformed percent-encoding" },
    { "/adm%zz", "malformed percent-encoding" },
    { "/adm%u0061", "malformed percent-encoding" },
    { "/ad%256d", "double percent-encoding" },
    { "/ad%25%36%64", "double percent-encoding" },
    { "/x/%252e%252e/adm", "double percent-encoding" },
    { "/x/..%2fadm", "encoded slash or backslash" },
    { "/adm%2Fx", "encoded slash or backslash" },
    { "/adm%5cx", "encoded slash or backslash" },
    { "/adm\\x", "encoded slash or backslash" },
    { "/adm%00", "control character" },
    { "/adm\0", "control character" },
    { "/adm%0a", "control character" },
    { "/adm%09", "control character" },
    { "/adm%1f", "control character" },
    { "/adm%7f", "control character" },
    { "/adm%c2%85", "invalid UTF-8" },
    { "/adm%c2%9f", "invalid UTF-8" },
    { "/x/%c0%ae%c0%ae/adm", "invalid UTF-8" },
    { "/x%c0%afadm", "invalid UTF-8" },
    { "/x%c1%bf", "invalid UTF-8" },
    { "/x%e0%80%af", "invalid UTF-8" },
    { "/x%f0%80%80%af", "invalid UTF-8" },
    { "/adm%ed%a0%80", "invalid UTF-8" },
    { "/x%f4%90%80%80", "invalid UTF-8" },
    { "/x%f5%80%80%80", "invalid UTF-8" },
    { "/adm%ff", "invalid UTF-8" },
    { "/adm%80", "invalid UTF-8" },
    { "/adm%e2%84", "invalid UTF-8" },
    { "/adm%e2%84/x", "invalid UTF-8" },
    { "/adm\226\132", "invalid UTF-8" },
    { "/x/..;/adm", "dot segment in disguise" },
    { "/x/..%3b/adm", "dot segment in disguise" },
    { "/x/.;/adm", "dot segment in disguise" },
    { "/x/...", "dot segment in disguise" },
    { "/x/..%20/adm", "dot segment in disguise" },
    { "/x/.%20", "dot segment in disguise" },
    { "/x/..::$DATA/adm", "dot segment in disguise" },
    { "/x/%ef%bc%8e%ef%bc%8e/adm", "dot segment in disguise" },
    { "/x/%e2%80%a5/adm", "dot segment in disguise" },
  }
  for _, case in ipairs(refused) do
    it(("refuses %q: %s"):format(case[1], case[2]), function()
      local strict, reason = canonical(case[1])
      assert.is_nil(strict)
      assert.equal(case[2], reason)
    end)
  end

  it("accepts the edges of UTF-8", function()
    assert.equal("/%C2%A0", (canonical("/%c2%a0")))
    assert.equal("/%DF%BF", (canonical("/%df%bf")))
    assert.equal("/%E0%A0%80", (canonical("/%e0%a0%80")))
    assert.equal("/%ED%9F%BF", (canonical("/%ed%9f%bf")))
    assert.equal("/%EE%80%80", (canonical("/%ee%80%80")))
    assert.equal("/%F0%90%80%80", (canonical("/%f0%90%80%80")))
    assert.equal("/%F4%8F%BF%BF", (canonical("/%f4%8f%bf%bf")))
  end)

  -- Random paths built from the pieces attacks are made of: whatever is accepted has a strict form that is its own
  -- canonical form with the same loose form (a backend or proxy normalising it again reads the same path), holds no
  -- dot segment, repeated slash, control byte, double encoding or lower-case escape.
  it("is idempotent and yields only clean paths, over 10,000 random spellings", function()
    local pieces = { "/", "/", "/", "a", "A", "adm", ".", "..", "%2e", "%2E", ";", "%3b", ";x=1", ":", "%3a", "%",
      "%25", "%2525", "%41", "%61", "%c3%a9", "\195\169", " ", "%20", "\\", "%5c", "%2f", "%00", "%ff", "%c0%ae",
      "%c5%bf", "~", "%7e", "+", "%2b", "?", "%3f", "#", "%23", "|", "@", "%40", "%ef%bd%81", "%e2%80%a6", "\t" }
    math.randomseed(25)
    local accepted = 0
    for _ = 1, 10000 do
      local parts = { "/" }
      for i = 2, math.random(1, 9) do parts[i] = pieces[math.random(#pieces)] end
      local raw = table.concat(parts)
      local strict, loose = canonical(raw)
      if strict then
        accepted = accepted + 1
        local again, loose_again = canonical(strict)
        assert.equal(strict, again, raw)
        assert.equal(loose, loose_again, raw)
        assert.is_nil(strict:find("//", 1, true), raw)
        assert.is_nil(strict:find("/%.%.?/"), raw)
        assert.is_nil(strict:find("/%.%.?$"), raw)
        assert.is_nil(strict:find("[^%w%-%._~!$&'()*+,;=:@/%%]"), raw)
        assert.is_nil(strict:find("%%%x?[a-f]"), raw)
        assert.is_nil(strict:find("%%25%x%x"), raw)
      end
    end
    assert.is_true(accepted > 500)
  end)
end)

describe("within", function()
  local function at(raw, prefix)
    local strict, loose = canonical(raw)
    return within(strict, loose, prefix)
  end

  it("matches a prefix and what lies below it, never a longer name", function()
    assert.is_true(at("/adm", "/adm"))
    assert.is_true(at("/adm/", "/adm"))
    assert.is_true(at("/adm/x/y", "/adm"))
    assert.is_false(at("/admin", "/adm"))
    assert.is_false(at("/ad", "/adm"))
    assert.is_false(at("/x/adm", "/adm"))
    assert.is_true(at("/anything;x", "/"))
    assert.is_true(at("/Docs/x", "/Docs"))
  end)

  it("calls a request ambiguous when a lenient backend would put it on the other side of the prefix", function()
    for _, raw in ipairs({ "/ADM", "/Adm/x", "/adm;x", "/adm%3bx", "/adm%20", "/adm.", "/adm::$DATA", "/adm%3fx",
      "/;x/adm", "/%ef%bd%81dm", "/docs/x" }) do
      assert.is_nil(at(raw, raw == "/docs/x" and "/Docs" or "/adm"), raw)
    end
  end)

  it("leaves alone what no reading puts inside", function()
    assert.is_false(at("/adm-x.", "/adm"))
    assert.is_false(at("/x/adm.", "/adm"))
    assert.is_false(at("/ADMIN/x", "/adm"))
    assert.is_false(at("/adm%25", "/adm"))
  end)
end)

describe("wildcard_of", function()
  local wildcard_of = postern.wildcard_of

  it("names the wildcard domain covering one label below it", function()
    assert.are.equal("*.example.com", wildcard_of("app.example.com"))
    assert.are.equal("*.b.example.com", wildcard_of("a.b.example.com"))
  end)

  it("covers no apex, no single label and no wildcard", function()
    assert.is_nil(wildcard_of("example.com"))
    assert.is_nil(wildcard_of("localhost"))
    assert.is_nil(wildcard_of("*.example.com"))
    assert.is_nil(wildcard_of(".example.com"))
    assert.is_nil(wildcard_of(nil))
  end)
end)
