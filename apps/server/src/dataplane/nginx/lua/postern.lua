-- Postern's routing inside nginx (lua-nginx-module, Debian's libnginx-mod-http-lua). Routes, access lists,
-- certificates and ACME answers are DATA in shared dictionaries, fed by the control plane over a root-only unix
-- socket (control()), so a change to one service needs no reload and disturbs nothing else. This file is the one
-- implementation of routing and access rules; the control plane only validates and serialises the data.
--
-- Dictionaries (declared in nginx.conf):
--   gw_routes  "v" → version string; "h:<host>" → JSON array of the host's routes, longest prefix first
--              (host "" = services without a domain, on the no-domain port)
--   gw_certs   "<name>" → combined PEM (key + chain); "_fallback" for no SNI, IPs and unknown names
--   gw_acme    "<token>" → key authorisation (HTTP-01)
--   gw_live    "<connection serial>" → "svc rev addr port server_port" of the request now in flight on it,
--              so the control plane can cut exactly the connections of a disabled or changed service
--   gw_stats   "<svc>:<field>" → traffic counters per service (see count()); "_epoch" → when they started;
--              "_dropped" / "_live_refused" → counter updates and requests refused for lack of room (never evicted)
-- No write here ever evicts: set/incr-with-init/add drop the least recently used entries when a dictionary is full
-- (a route, a tracked connection, a counter would vanish without a word), so every write is safe_set/safe_add or an
-- incr of an entry that exists, and a write that finds no room is refused, counted and reported instead.
-- A route: { s = service id, r = revision, p = path prefix ("/" or "/a/b", no trailing slash),
--            u = upstream URL ("http://10.44.0.5:8080"), a = allowed, b = blocked: lists of {network, bits}
--            with network as a 32-bit number }.

local cjson = require("cjson.safe")
-- Who may reach a service (docs/ACCESS.md): its own module, dictionary (gw_access) and control endpoint (/access).
local access = require("postern_access")

local ngx = ngx
local shared = ngx.shared
local byte, sub, find, lower = string.byte, string.sub, string.find, string.lower
local floor = math.floor
local concat = table.concat

local _M = {}

local opts = {}
-- Per worker: decoded routes by host, dropped whenever the version in gw_routes changes.
local cache = {}
local cache_version = nil
-- Per worker: parsed certificates by name, kept while the PEM in gw_certs is the same string.
local cert_cache = {}

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local data = f:read("*a")
  f:close()
  return data
end

-- Counters of writes refused for lack of room, in gw_stats: made at init, so counting them never needs room.
local DROPPED, LIVE_REFUSED = "_dropped", "_live_refused"
-- Every dictionary, for GET /space.
local DICTS = { "gw_routes", "gw_certs", "gw_acme", "gw_live", "gw_stats", "gw_access" }

local function is_empty(dict)
  return #dict:get_keys(1) == 0
end

-- Runs in the master (as root) at start and on every reload. Shared dictionaries survive a reload when their size is
-- unchanged: only an empty one (a fresh master, or one the control plane grew) is filled from the snapshot the
-- control plane keeps on disk, so nginx serves what it served before its first request, whether or not the control
-- plane is up.
function _M.init(options_json)
  opts = assert(cjson.decode(options_json), "invalid postern options")
  access.init(opts)
  local stats = shared.gw_stats
  stats:safe_add("_epoch", tostring(ngx.now()))
  stats:safe_add(DROPPED, 0)
  stats:safe_add(LIVE_REFUSED, 0)
  local routes, certs = shared.gw_routes, shared.gw_certs
  local load_routes, load_certs = is_empty(routes), is_empty(certs)
  if not load_routes and not load_certs then return end
  local text = read_file(opts.snapshot)
  local snapshot = text and cjson.decode(text)
  if type(snapshot) ~= "table" or type(snapshot.hosts) ~= "table" then return end
  if load_routes then
    local complete = true
    for host, list in pairs(snapshot.hosts) do
      local ok, err = routes:safe_set("h:" .. host, list)
      if not ok then
        ngx.log(ngx.ERR, "postern: the routes dictionary has no room for the saved routes (", err, ")")
        complete = false
        break
      end
    end
    -- Without a version the control plane reads back what was loaded and pushes the rest.
    if complete then routes:safe_set("v", tostring(snapshot.version or "0")) end
  end
  if load_certs then
    for _, name in ipairs(snapshot.certs or {}) do
      -- Names were validated by the control plane (DNS names, "_fallback"); never a path of their own.
      if find(name, "^[a-z0-9_][a-z0-9.-]*$") and not find(name, "..", 1, true) then
        local pem = read_file(opts.certs_dir .. "/" .. name .. ".pem")
        if pem and not certs:safe_set(name, pem) then
          ngx.log(ngx.ERR, "postern: the certificate dictionary has no room for the saved certificates")
          break
        end
      end
    end
  end
end

-- 4 bytes of $binary_remote_addr as a number (IPv4; nginx listens on IPv4 only).
local function client_number()
  local bin = ngx.var.binary_remote_addr
  if not bin or #bin ~= 4 then return nil end
  local a, b, c, d = byte(bin, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

local function in_list(ip, list)
  for i = 1, #list do
    local entry = list[i]
    local size = 2 ^ (32 - entry[2])
    if floor(ip / size) == floor(entry[1] / size) then return true end
  end
  return false
end

-- Blocked addresses first, then, when an allow-list exists, only those (nginx's deny…; allow…; deny all).
local function is_allowed(route)
  local blocked, allowed = route.b, route.a
  if (blocked == nil or #blocked == 0) and (allowed == nil or #allowed == 0) then return true end
  local ip = client_number()
  if ip == nil then return false end
  if blocked and in_list(ip, blocked) then return false end
  if allowed and #allowed > 0 then return in_list(ip, allowed) end
  return true
end

-- The wildcard domain that would cover `host` ("app.example.com" -> "*.example.com"): one label, as a certificate's
-- wildcard covers (RFC 6125); nil for a name of fewer than three labels or one that is a wildcard itself.
function _M.wildcard_of(host)
  if host == nil or sub(host, 1, 1) == "*" then return nil end
  local dot = find(host, ".", 1, true)
  if dot == nil or dot == 1 then return nil end
  local parent = sub(host, dot + 1)
  if find(parent, ".", 1, true) == nil then return nil end
  return "*." .. parent
end

local function routes_for(host)
  local dict = shared.gw_routes
  local version = dict:get("v")
  if version ~= cache_version then
    cache = {}
    cache_version = version
  end
  local list = cache[host]
  if list == nil then
    local text = dict:get("h:" .. host)
    list = text and cjson.decode(text) or false
    cache[host] = list
  end
  return list
end

-- Paths (the dataplane README's "Paths: one canonical form" has the rules and the table of spellings). A request's
-- path is read from $request_uri as the client sent it and has two forms:
--   strict  the path as the backend receives it: percent-encodings of unreserved characters decoded, other encodings
--           in upper case, dot segments resolved, slashes merged; everything else as sent. Routes match it exactly.
--   loose   what a lenient backend could make of it: decoded, each segment cut at `;` (path parameters), `:` (NTFS
--           streams) or a decoded `?` or `#`, trailing dots and spaces dropped, look-alike letters and letter case
--           folded. Only compared, never sent.
-- A request whose two forms fall on different sides of a route prefix is refused (400), as is one no form can be
-- given to (malformed or ambiguous: see canonical_segment). So the route matched is the one every backend reads.

local char, format, gsub, gmatch, match_str = string.char, string.format, string.gsub, string.gmatch, string.match

-- Bytes sent as they are (RFC 3986): unreserved ones (also when they arrive encoded), and sub-delims, `:` and `@`
-- when they arrive plain (encoded, they mean something else to some backends, so they stay encoded).
local UNRESERVED, KEPT = {}, {}
for b = 0, 255 do
  local c = char(b)
  UNRESERVED[b] = find(c, "^[%w%-%._~]$") ~= nil and b < 128
  KEPT[b] = UNRESERVED[b] or find(c, "^[!$&'()*+,;=:@]$") ~= nil
end
local PLAIN_SEGMENT = "^[%w%-%._~!$&'()*+,;=:@]*$"

local function hex(b)
  if b == nil then return nil end
  if b >= 48 and b <= 57 then return b - 48 end
  if b >= 65 and b <= 70 then return b - 55 end
  if b >= 97 and b <= 102 then return b - 87 end
  return nil
end

-- One raw segment (between slashes) → its strict spelling and its decoded bytes, or nil and why it is refused:
-- malformed or double percent-encoding, an encoded slash, a backslash, a control byte (C0, DEL, C1), or bytes that
-- are not UTF-8 in its shortest form (overlong, surrogates, beyond U+10FFFF, truncated).
local function canonical_segment(raw)
  if find(raw, PLAIN_SEGMENT) then return raw, raw end
  local out, dec = {}, {}
  local need, lo, hi = 0, 128, 191
  local i, n = 1, #raw
  while i <= n do
    local b, encoded = byte(raw, i), false
    if b == 37 then
      local h1, h2 = hex(byte(raw, i + 1)), hex(byte(raw, i + 2))
      if not h1 or not h2 then return nil, "malformed percent-encoding" end
      b, encoded, i = h1 * 16 + h2, true, i + 3
    else
      i = i + 1
    end
    if need > 0 then
      if b < lo or b > hi then return nil, "invalid UTF-8" end
      need, lo, hi = need - 1, 128, 191
    elseif b >= 128 then
      if b == 0xC2 then need, lo = 1, 0xA0 -- U+0080-U+009F are C1 controls
      elseif b > 0xC2 and b <= 0xDF then need = 1
      elseif b == 0xE0 then need, lo = 2, 0xA0
      elseif b == 0xED then need, hi = 2, 0x9F
      elseif b >= 0xE1 and b <= 0xEF then need = 2
      elseif b == 0xF0 then need, lo = 3, 0x90
      elseif b >= 0xF1 and b <= 0xF3 then need = 3
      elseif b == 0xF4 then need, hi = 3, 0x8F
      else return nil, "invalid UTF-8" end
    elseif b < 32 or b == 127 then
      return nil, "control character"
    elseif b == 47 or b == 92 then
      return nil, "encoded slash or backslash"
    end
    dec[#dec + 1] = char(b)
    out[#out + 1] = (UNRESERVED[b] or (KEPT[b] and not encoded)) and char(b) or format("%%%02X", b)
  end
  if need > 0 then return nil, "invalid UTF-8" end
  local spelled = concat(out)
  -- Checked on what the backend will read: `%25%34%31` must not become a `%2541` a second decoding turns into `A`.
  if find(spelled, "%%25%x%x") then return nil, "double percent-encoding" end
  return spelled, concat(dec)
end

-- Characters some backends fold into ASCII (.NET's and Java's case-insensitive comparisons, NFKC): dotted and
-- dotless i, long s, the Kelvin sign; fullwidth digits, letters and full stop; dot leaders, the ellipsis and the
-- small full stop.
local LOOK_ALIKES = { ["\196\176"] = "i", ["\196\177"] = "i", ["\197\191"] = "s", ["\226\132\170"] = "k",
  ["\226\128\164"] = ".", ["\226\128\165"] = "..", ["\226\128\166"] = "...", ["\239\185\146"] = "." }
for b = 0, 25 do
  if b < 10 then LOOK_ALIKES["\239\188" .. char(0x90 + b)] = char(48 + b) end
  LOOK_ALIKES["\239\188" .. char(0xA1 + b)] = char(65 + b)
  LOOK_ALIKES["\239\189" .. char(0x81 + b)] = char(97 + b)
end
LOOK_ALIKES["\239\188\142"] = "."

-- A decoded segment's loose form; false for a dot segment in disguise (`..;`, `. `, `...`), which is refused.
local function loose_segment(dec)
  if find(dec, "[\128-\255]") then dec = gsub(dec, "[\196-\239][\128-\191]+", LOOK_ALIKES) end
  local core = match_str(dec, "^[^;:?#]*")
  if core ~= "" and find(core, "^[. ]+$") then return false end
  return lower((gsub(core, "[. ]+$", "")))
end

--- The canonical form of a raw request path (from $request_uri, without the query): the strict path and the loose
--- one; or nil and the reason it is refused. Also for other modules matching paths (e.g. access policies).
function _M.canonical_path(raw)
  if type(raw) ~= "string" or byte(raw, 1) ~= 47 then return nil, "not an absolute path" end
  local strict, loose, n = {}, {}, 0
  local trailing = false
  for segment in gmatch(raw, "/([^/]*)") do
    trailing = true
    if segment ~= "" then
      local spelled, dec = canonical_segment(segment)
      if not spelled then return nil, dec end
      if spelled == ".." then
        if n == 0 then return nil, "above the root" end
        strict[n], loose[n], n = nil, nil, n - 1
      elseif spelled ~= "." then
        local l = loose_segment(dec)
        if not l then return nil, "dot segment in disguise" end
        n = n + 1
        strict[n], loose[n], trailing = spelled, l, false
      end
    end
  end
  local path = "/" .. concat(strict, "/", 1, n) .. ((trailing and n > 0) and "/" or "")
  local kept = {}
  for i = 1, n do
    if loose[i] ~= "" then kept[#kept + 1] = loose[i] end
  end
  return path, "/" .. concat(kept, "/")
end

-- `/api` matches `/api` and `/api/…`, never `/apix`; `/` matches everything.
local function under(path, prefix)
  if prefix == "/" or path == prefix then return true end
  local n = #prefix
  return sub(path, 1, n) == prefix and byte(path, n + 1) == 47
end

--- Whether a request (its strict and loose path) lies at or below a prefix (a stored path location: contract's
--- isPathLocation, no trailing slash): true or false when both forms agree, nil when they do not (ambiguous).
function _M.within(path, loose, prefix)
  local inside = under(path, prefix)
  if inside == under(loose, lower(prefix)) then return inside end
  return nil
end

-- The longest prefix the request lies within, and whether that is ambiguous (then it is refused).
local function match(list, path, loose)
  for i = 1, #list do
    local inside = _M.within(path, loose, list[i].p)
    if inside ~= false then return list[i], inside == nil end
  end
  return nil
end

-- The access log never holds a `token` query parameter in any encoding (the console's event streams carry the
-- session there): every `&`-separated part whose DECODED text mentions "token" (`%74oken=`, `TOKEN=`, `a=1;token=`,
-- `token%3D…`) is logged as `[redacted]`; the rest of the query is logged as the client sent it.
local function log_uri()
  local request_uri = ngx.var.request_uri or ""
  local args = ngx.var.args
  if args == nil or args == "" then return request_uri end
  local unescape = ngx.unescape_uri
  if not find(lower(unescape(args)), "token", 1, true) then return request_uri end
  local parts, start = {}, 1
  while start <= #args + 1 do
    local stop = find(args, "&", start, true) or (#args + 1)
    local part = sub(args, start, stop - 1)
    parts[#parts + 1] = find(lower(unescape(part)), "token", 1, true) and "[redacted]" or part
    start = stop + 1
  end
  local path = sub(request_uri, 1, (find(request_uri, "?", 1, true) or (#request_uri + 1)) - 1)
  return path .. "?" .. concat(parts, "&")
end

-- The console's session cookie `__Host-token` (docs/api.md "Session cookie") has Path=/, and cookies ignore ports:
-- browsers send it to the no-domain port too, where node services are published on the console's host name. There
-- it is taken out of each request before it is proxied, and a backend's Set-Cookie for it is dropped (headers()),
-- so no node reads the session or replaces it. Names compare without case, as browsers check the prefix; a nameless
-- cookie whose value spells the name counts too (some browsers send it as that name).
local function is_session_cookie(text)
  return find(lower(text), "^[%s=]*__host%-token%s*=") ~= nil
end

local function strip_session_cookie()
  local header = ngx.var.http_cookie
  if header == nil or not find(lower(header), "__host-token", 1, true) then return end
  local kept = {}
  for pair in string.gmatch(header, "[^;]+") do
    if not is_session_cookie(pair) then kept[#kept + 1] = pair:match("^%s*(.-)%s*$") end
  end
  if #kept == 0 then ngx.req.clear_header("Cookie") else ngx.req.set_header("Cookie", concat(kept, "; ")) end
end

-- Logs a dictionary that ran out of room at most once a minute per worker (each failure is counted).
local last_complaint = {}
local function complain(what, err)
  local now = ngx.now()
  if (last_complaint[what] or 0) + 60 > now then return end
  last_complaint[what] = now
  ngx.log(ngx.ERR, "postern: ", what, " (", err or "no memory", "); see GET /space and the dictionary metrics")
end

-- The cut-off (GET /live) must know every request it may have to end: a request whose connection cannot be tracked
-- (gw_live is full) is refused with 503, counted in "_live_refused" and logged, rather than served untracked.
local function remember(route)
  local var = ngx.var
  local entry = concat({ route.s, route.r, var.remote_addr, var.remote_port, var.server_port }, " ")
  local ok, err = shared.gw_live:safe_set(var.connection, entry)
  if ok then return end
  shared.gw_stats:incr(LIVE_REFUSED, 1)
  complain("gw_live is full: refusing requests the cut-off could not track", err)
  return ngx.exit(503)
end

-- access_by_lua of the HTTPS servers: pick the service, apply its access list, hand nginx the upstream and the path
-- it was matched on ($gw_path: the strict path and the query as sent).
function _M.route()
  local var = ngx.var
  var.gw_log_uri = log_uri()
  local port = tonumber(var.server_port)
  local host = ""
  if port ~= opts.no_domain_port then
    host = var.host
    if host == opts.console_host then
      var.gw_svc = "console"
      var.gw_up = opts.console_upstream
      var.gw_path = var.request_uri
      return
    end
    -- No Host at all (HTTP/1.0): no domain's, and never the no-domain services' (host key ""), which live on their
    -- own port only.
    if host == "" then return ngx.exit(404) end
  end
  local request_uri = var.request_uri
  local query = find(request_uri, "?", 1, true)
  local path, loose = _M.canonical_path(query and sub(request_uri, 1, query - 1) or request_uri)
  if not path then return ngx.exit(400) end
  -- The console's API is /api on the same host name: nothing on the no-domain origin may answer below it; and the
  -- console's session cookie (Path=/) is not handed to a service there.
  if host == "" and _M.within(path, loose, "/api") ~= false then return ngx.exit(404) end
  if host == "" then strip_session_cookie() end
  local list = routes_for(host)
  -- An exact host first: a name with services of its own never falls through to its wildcard's.
  if not list and host ~= "" then
    local wildcard = _M.wildcard_of(host)
    list = wildcard and routes_for(wildcard)
  end
  if not list then return ngx.exit(404) end
  local route, ambiguous = match(list, path, loose)
  if route == nil then return ngx.exit(404) end
  if ambiguous then return ngx.exit(400) end
  var.gw_svc = route.s
  if not is_allowed(route) then return ngx.exit(403) end
  if not access.check(route, host, path, loose) then return end
  var.gw_up = route.u
  var.gw_path = query and (path .. sub(request_uri, query)) or path
  remember(route)
end

-- header_filter_by_lua of the HTTPS servers: on the no-domain port, no backend sets the console's session cookie.
function _M.headers()
  if tonumber(ngx.var.server_port) ~= opts.no_domain_port then return end
  local set = ngx.header["Set-Cookie"]
  if set == nil then return end
  if type(set) == "string" then set = { set } end
  local kept = {}
  for i = 1, #set do
    if not is_session_cookie(set[i]) then kept[#kept + 1] = set[i] end
  end
  if #kept < #set then ngx.header["Set-Cookie"] = #kept > 0 and kept or nil end
end

-- Request latency buckets (ms, upper bounds; the last one is everything slower): the control plane turns their counts
-- into p50/p95 per minute.
local LATENCY_BUCKETS = { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000 }

-- Adds `n` to a counter without ever evicting one: incr of an existing entry changes it in place; a new one is made
-- with safe_add, and when there is no room the update is dropped and counted in "_dropped" (a counter never starts
-- again from zero behind the reader's back).
local function add(stats, key, n)
  if n == 0 then return end
  if stats:incr(key, n) then return end
  local ok, err = stats:safe_add(key, n)
  if ok then return end
  -- Another worker made it meanwhile.
  if err == "exists" and stats:incr(key, n) then return end
  stats:incr(DROPPED, 1)
  complain("gw_stats is full: traffic counter updates are dropped", err)
end

-- Traffic per service, in gw_stats: "<svc>:c<class>" requests by status class, ":bi"/":bo" bytes in and out,
-- ":ls" latency sum (ms), ":b<i>" latency bucket counts. Monotonic for the life of the dictionary ("_epoch").
-- A field that never counted anything is absent (read as 0).
local function count(svc, var)
  local stats = shared.gw_stats
  local status = tonumber(var.status) or 0
  local ms = (tonumber(var.request_time) or 0) * 1000
  local bucket = #LATENCY_BUCKETS
  for i = 1, #LATENCY_BUCKETS do
    if ms <= LATENCY_BUCKETS[i] then
      bucket = i - 1
      break
    end
  end
  add(stats, svc .. ":c" .. floor(status / 100), 1)
  add(stats, svc .. ":bi", tonumber(var.request_length) or 0)
  add(stats, svc .. ":bo", tonumber(var.bytes_sent) or 0)
  add(stats, svc .. ":ls", ms)
  add(stats, svc .. ":b" .. bucket, 1)
end

-- log_by_lua: the request is over; its connection no longer carries that service, and it is counted.
function _M.done()
  local var = ngx.var
  local svc = var.gw_svc
  if svc == "" or svc == "console" then return end
  if var.gw_up ~= "" then
    local live = shared.gw_live
    local key = var.connection
    local entry = live:get(key)
    if entry and sub(entry, 1, #svc + 1) == svc .. " " then live:delete(key) end
  end
  if opts.count_traffic ~= false then count(svc, var) end
end

-- Port 80: ACME HTTP-01 answers for every host, the tunnel health check on the gateway's tunnel address,
-- a redirect to HTTPS for everything else.
function _M.plain()
  local var = ngx.var
  var.gw_log_uri = log_uri()
  local uri = var.uri
  local token = uri:match("^/%.well%-known/acme%-challenge/([A-Za-z0-9_-]+)$")
  if token then
    local answer = shared.gw_acme:get(token)
    if answer == nil then return ngx.exit(404) end
    ngx.header["Content-Type"] = "text/plain"
    ngx.print(answer)
    return ngx.exit(200)
  end
  if opts.tunnel_address and var.server_addr == opts.tunnel_address then
    if uri == "/_postern/tunnel-health" then
      ngx.header["Content-Type"] = "text/plain"
      ngx.print("ok")
      return ngx.exit(200)
    end
    return ngx.exit(404)
  end
  local https_port = opts.https_port
  local target = "https://" .. var.host .. (https_port == 443 and "" or (":" .. https_port)) .. var.request_uri
  return ngx.redirect(target, 301)
end

-- ssl_certificate_by_lua: the domain's own certificate by SNI, the fallback for no SNI, IPs and unknown names.
function _M.certificate()
  local ssl = require("ngx.ssl")
  local certs = shared.gw_certs
  local name = ssl.server_name()
  name = name and lower(name)
  local pem = name and certs:get(name)
  -- No certificate of its own: the wildcard domain's covering it (`*.example.com` for `app.example.com`). Never for
  -- the console's host name: it keeps the fallback certificate made for it, whatever wildcard an operator adds.
  if pem == nil and name and name ~= opts.console_host then
    local wildcard = _M.wildcard_of(name)
    pem = wildcard and certs:get(wildcard)
    if pem ~= nil then name = wildcard end
  end
  if pem == nil then
    name = "_fallback"
    pem = certs:get(name)
    -- Not pushed yet: the static fallback certificate of the server block serves.
    if pem == nil then return end
  end
  local parsed = cert_cache[name]
  if parsed == nil or parsed.pem ~= pem then
    local cert, err = ssl.parse_pem_cert(pem)
    local key, kerr = ssl.parse_pem_priv_key(pem)
    if not cert or not key then
      ngx.log(ngx.ERR, "postern: unusable certificate for ", name, ": ", err or kerr)
      return
    end
    parsed = { pem = pem, cert = cert, key = key }
    cert_cache[name] = parsed
  end
  local ok, err = ssl.clear_certs()
  if ok then ok, err = ssl.set_cert(parsed.cert) end
  if ok then ok, err = ssl.set_priv_key(parsed.key) end
  if not ok then ngx.log(ngx.ERR, "postern: cannot set certificate for ", name, ": ", err) end
end

-- The control socket (root only). Small JSON requests from the control plane:
--   POST /routes  {"base": v|null, "version": v, "set": {host: json}, "del": [host]}  (base: the version held now)
--   POST /certs   {"set": {name: pem}, "del": [name]}
--   POST /acme    {"set": {token: answer}, "del": [token]}
--   POST /held    {"hosts": [host]} → {"hosts": {host: json}}  (what nginx holds for these hosts)
--   POST /stats   {"del": [svc]}  (forget the counters of services that are gone)
--   GET  /state   → {"version": v, "hosts": n, "certs": n}
--   GET  /digest  → {"version": v, "hosts": {host: md5}, "certs": {name: md5}, "cert_bytes": {name: length}}
--   GET  /space   → {"dicts": {name: {"capacity": bytes, "free": bytes}}, "dropped": n, "live_refused": n}
--   GET  /stats   → {"epoch": e, "services": {svc: {c2: n, bi: n, bo: n, ls: ms, b0: n, …, open: n}}, "dropped": n}
--   GET  /live    → [[connection, "svc rev addr port server_port"], ...]
-- A change (POST /routes, /certs, /acme) is all or nothing: 507 {"error", "dict", "need", "free", "free_space",
-- "capacity", "intact"} when it does not fit (whole pages; "free" counts what the change frees; "intact" true:
-- nothing changed).
local function reply(status, value)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  ngx.print(cjson.encode(value))
  return ngx.exit(status)
end

local function read_json()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body == nil then return nil end
  local value = cjson.decode(body)
  if type(value) ~= "table" then return nil end
  return value
end

-- Bytes an entry takes in a shared dictionary: nginx's slab allocator gives an entry of up to half a page the next
-- power of two (at least 8 bytes) and a larger one whole pages; 68 bytes are the red-black tree node and
-- lua-nginx-module's dictionary node before the key (64-bit). The control plane sizes the dictionaries with the same
-- arithmetic (nginx/dict-sizes.ts `entryBytes`).
local PAGE, NODE_BYTES = 4096, 68
local function entry_bytes(key_len, value_len)
  local n = NODE_BYTES + key_len + value_len
  if n > PAGE / 2 then return math.ceil(n / PAGE) * PAGE end
  local slot = 8
  while slot < n do slot = slot * 2 end
  return slot
end

-- The whole pages an entry takes (0 for one of up to half a page, which shares a page with others of its size).
local function page_bytes(key_len, value_len)
  local bytes = entry_bytes(key_len, value_len)
  return bytes > PAGE / 2 and bytes or 0
end

local function is_list_of_strings(list)
  if list == nil then return true end
  if type(list) ~= "table" then return false end
  for _, item in ipairs(list) do if type(item) ~= "string" then return false end end
  return true
end

-- Applies one change to `dict` all or nothing: deletes `del` and writes `set` (keys under `prefix`), then the `after`
-- pairs (the routes' version). A change that does not fit is refused before anything is written: the whole pages its
-- large entries take against free_space() (whole free pages) plus the pages it frees. Small entries share pages
-- with others of their size, which free_space() cannot see, so they are simply tried. A write that still fails undoes
-- every write before it and restores what was there. safe_set only: nothing else in the dictionary is ever evicted to
-- make room. Returns nil when applied, or what to answer with 507.
local function transact(dict, name, prefix, set, del, after)
  local touched, old = {}, {}
  local need, freed = 0, 0
  local function touch(key)
    if old[key] ~= nil then return end
    local value = dict:get(key)
    old[key] = value == nil and false or value
    touched[#touched + 1] = key
    if type(value) == "string" then freed = freed + page_bytes(#key, #value) end
  end
  local writes = {}
  for _, key in ipairs(del or {}) do touch(prefix .. key) end
  for key, value in pairs(set or {}) do
    key = prefix .. key
    touch(key)
    writes[#writes + 1] = { key, value }
    need = need + page_bytes(#key, #value)
  end
  for _, pair in ipairs(after or {}) do
    touch(pair[1])
    writes[#writes + 1] = pair
    need = need + page_bytes(#pair[1], #pair[2])
  end
  local free = dict:free_space()
  local refusal = {
    error = "no room", dict = name, need = need, free = free + freed, free_space = free, capacity = dict:capacity(),
  }
  if need > free + freed then
    refusal.intact = true
    return refusal
  end
  for _, key in ipairs(del or {}) do dict:delete(prefix .. key) end
  for i = 1, #writes do
    local ok, err = dict:safe_set(writes[i][1], writes[i][2])
    if not ok then
      -- Undo: everything the change wrote goes first, so all it took is free again (a page it took for entries of one
      -- size may be what an entry of another size needs back), then what was there comes back.
      for _, key in ipairs(touched) do
        local value = dict:get(key)
        if value ~= nil and value ~= old[key] then dict:delete(key) end
      end
      local whole = true
      for _, key in ipairs(touched) do
        if old[key] ~= false and dict:get(key) == nil and not dict:safe_set(key, old[key]) then whole = false end
      end
      ngx.log(ngx.ERR, "postern: ", name, " had no room for a change (", err, "); ",
        whole and "undone" or "undone in part")
      refusal.intact = whole
      return refusal
    end
  end
  return nil
end

local function count_keys(dict, prefix)
  local n = 0
  for _, key in ipairs(dict:get_keys(0)) do
    if prefix == nil or sub(key, 1, #prefix) == prefix then n = n + 1 end
  end
  return n
end

-- The fields count() writes per service, so POST /stats forgets a service without scanning the dictionary.
local STAT_FIELDS = { "c1", "c2", "c3", "c4", "c5", "bi", "bo", "ls" }
for i = 0, #LATENCY_BUCKETS do STAT_FIELDS[#STAT_FIELDS + 1] = "b" .. i end

function _M.control()
  local method, uri = ngx.req.get_method(), ngx.var.uri
  if method == "GET" and uri == "/state" then
    local routes = shared.gw_routes
    local version = routes:get("v") or cjson.null
    return reply(200, { version = version, hosts = count_keys(routes, "h:"), certs = count_keys(shared.gw_certs, nil) })
  end
  if method == "GET" and uri == "/space" then
    local dicts = {}
    for _, name in ipairs(DICTS) do
      local dict = shared[name]
      dicts[name] = { capacity = dict:capacity(), free = dict:free_space() }
    end
    local stats = shared.gw_stats
    return reply(200, { dicts = dicts, dropped = stats:get(DROPPED) or 0, live_refused = stats:get(LIVE_REFUSED) or 0 })
  end
  if method == "GET" and uri == "/digest" then
    -- What this nginx holds, as MD5s: a control plane that adopts it pushes only what differs.
    local routes, certs = shared.gw_routes, shared.gw_certs
    -- The PEMs' lengths too: the control plane sizes gw_certs from them (an estimate instead made the first new
    -- certificate after an adoption grow the dictionary eightfold, a reload).
    local hosts, pems, lengths = {}, {}, {}
    for _, key in ipairs(routes:get_keys(0)) do
      if sub(key, 1, 2) == "h:" then
        local value = routes:get(key)
        if value then hosts[sub(key, 3)] = ngx.md5(value) end
      end
    end
    for _, key in ipairs(certs:get_keys(0)) do
      local value = certs:get(key)
      if value then
        pems[key] = ngx.md5(value)
        lengths[key] = #value
      end
    end
    return reply(200, { version = routes:get("v") or cjson.null, hosts = hosts, certs = pems, cert_bytes = lengths })
  end
  if method == "GET" and uri == "/stats" then
    -- Every counter, and the requests in flight per service (open connections).
    local stats = shared.gw_stats
    local services = {}
    for _, key in ipairs(stats:get_keys(0)) do
      local svc, field = key:match("^(%d+):(%w+)$")
      if svc then
        local row = services[svc] or {}
        row[field] = stats:get(key)
        services[svc] = row
      end
    end
    local live = shared.gw_live
    for _, key in ipairs(live:get_keys(0)) do
      local value = live:get(key)
      local svc = value and value:match("^(%d+) ")
      if svc then
        local row = services[svc] or {}
        row.open = (row.open or 0) + 1
        services[svc] = row
      end
    end
    local epoch = stats:get("_epoch") or cjson.null
    return reply(200, { epoch = epoch, services = services, dropped = stats:get(DROPPED) or 0 })
  end
  if method == "GET" and uri == "/live" then
    local live = shared.gw_live
    local out = {}
    for _, key in ipairs(live:get_keys(0)) do
      local value = live:get(key)
      if value then out[#out + 1] = { key, value } end
    end
    return reply(200, out)
  end
  if sub(uri, 1, 7) == "/access" then return access.control(method, uri) end
  if method ~= "POST" then return reply(405, { error = "method not allowed" }) end
  local body = read_json()
  if body == nil then return reply(400, { error = "the body must be a JSON object" }) end
  local set, del = body.set, body.del
  if set ~= nil and type(set) ~= "table" then return reply(400, { error = "set must be an object" }) end
  for key, value in pairs(set or {}) do
    if type(key) ~= "string" or type(value) ~= "string" then
      return reply(400, { error = "set must map names to strings" })
    end
  end
  if not is_list_of_strings(del) then return reply(400, { error = "del must be a list of names" }) end
  if uri == "/routes" then
    local routes = shared.gw_routes
    local current = routes:get("v")
    local base = body.base
    if base == cjson.null then base = nil end
    -- Every change is a delta against the version held: one made against anything else is refused whole.
    if base ~= current then return reply(409, { error = "version mismatch", version = current or cjson.null }) end
    if type(body.version) ~= "string" then return reply(400, { error = "version must be a string" }) end
    local refused = transact(routes, "gw_routes", "h:", set, del, { { "v", body.version } })
    if refused then
      -- Undone in part only: no version the control plane knows, so it reads back what is held before its next change.
      if not refused.intact then routes:delete("v") end
      return reply(507, refused)
    end
    return reply(200, { version = body.version })
  end
  if uri == "/certs" or uri == "/acme" then
    local name = uri == "/certs" and "gw_certs" or "gw_acme"
    local refused = transact(shared[name], name, "", set, del, nil)
    if refused then return reply(507, refused) end
    return reply(200, {})
  end
  if uri == "/held" then
    if not is_list_of_strings(body.hosts) then return reply(400, { error = "hosts must be a list of names" }) end
    local routes, out = shared.gw_routes, {}
    for _, host in ipairs(body.hosts or {}) do
      local value = routes:get("h:" .. host)
      if value then out[host] = value end
    end
    return reply(200, { hosts = out })
  end
  if uri == "/stats" then
    local stats = shared.gw_stats
    for _, svc in ipairs(del or {}) do
      if find(svc, "^%d+$") then
        for _, field in ipairs(STAT_FIELDS) do stats:delete(svc .. ":" .. field) end
      end
    end
    return reply(200, {})
  end
  return reply(404, { error = "no such control endpoint" })
end

return _M
