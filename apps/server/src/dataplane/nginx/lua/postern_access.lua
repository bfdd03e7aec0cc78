-- Who may reach a published service (docs/ACCESS.md), checked inside nginx: a visitor's signed cookie is
-- verified here with the key the control plane pushed, with no round trip to Node.js. postern.lua's route() calls
-- check() once per request; only the sign-in exchange (location /_postern/access/) goes to the control plane.
--
-- Dictionary gw_access (declared in nginx.conf):
--   "v"         → version of the last push (worker caches of policies are dropped when it changes)
--   "k"         → "<key id> <32-byte key, base64>": the key cookies are signed with
--   "p:<ref>"   → JSON of a protected policy {i = id, e = epoch, bp = {paths}, bn = {{network, bits}}}; routes name it
--                 by ref ("<id>.<content hash>", the route's `x`), so a push adds new refs before the routes name them
--                 and deletes old ones after (all or nothing: a route never names a policy nginx lacks)
--   "r:<sid>"   → a revoked session, kept until the session would have expired (the entry's TTL)
-- A cookie `__Host-postern-<policy id>` = "v1.<kid>.<payload>.<mac>", payload base64url JSON
-- {s = session, p = policy, e = epoch, x = expiry, u = user, m = email, g = {groups}, a = path}, mac = base64url
-- HMAC-SHA-256 of "v1.<kid>.<payload>|<host>": the host is in the MAC, so a cookie is worthless on any other host.

local cjson = require("cjson.safe")

local ngx = ngx
local shared = ngx.shared
local byte, sub, find = string.byte, string.sub, string.find
local floor = math.floor
local concat = table.concat

-- HMAC-SHA-256 from the libcrypto nginx is linked with (1.1-1.2 µs per call here, like ngx.hmac_sha1), through
-- LuaJIT's FFI. Plain Lua 5.1 has no FFI: there (busted specs loading postern.lua) the module loads, unusable for MACs.
local has_ffi, ffi = pcall(require, "ffi")
local C, mac_buf, mac_len, sha256 = nil, nil, nil, nil
if has_ffi then
  pcall(ffi.cdef, [[
typedef struct evp_md_st EVP_MD;
const EVP_MD *EVP_sha256(void);
unsigned char *HMAC(const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *d, size_t n,
                    unsigned char *md, unsigned int *md_len);
]])
  C = ffi.C
  mac_buf = ffi.new("unsigned char[64]")
  mac_len = ffi.new("unsigned int[1]")
end

local function hmac_sha256(key, data)
  if not has_ffi then return nil end
  sha256 = sha256 or C.EVP_sha256()
  if C.HMAC(sha256, key, #key, data, #data, mac_buf, mac_len) == nil then return nil end
  return ffi.string(mac_buf, mac_len[0])
end

-- resty.core's base64url, loaded at first use (it needs nginx).
local base64 = nil
local function decode_base64url(text)
  base64 = base64 or require("ngx.base64")
  return base64.decode_base64url(text)
end

local COOKIE_PREFIX = "__Host-postern-"
local SIGN_IN = "/_postern/access/sign-in"
local VERIFIED_MAX = 10000

local _M = {}

local opts = {}
-- Per worker: decoded policies by ref, dropped when "v" changes; verified cookies by host and value, dropped when
-- the key changes or the table is full (so a flood of forged cookies cannot grow it).
local policies, policies_version = {}, nil
local verified, verified_count, verified_key = {}, 0, nil
local key_id, key_raw = nil, nil

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local data = f:read("*a")
  f:close()
  return data
end

local function dict() return shared.gw_access end

-- Whether the request lies at or below `prefix` on the canonical path form route matching uses (postern.lua's
-- canonical_path and within, given its strict and loose form): only a clear yes counts, so a request ambiguous for a
-- bypass path is checked like any other.
local function within(path, loose, prefix)
  local postern = package.loaded.postern
  return postern.within(path, loose, prefix) == true
end

local function set_revocations(d, revoke, now)
  for sid, expiry in pairs(revoke or {}) do
    local ttl = (tonumber(expiry) or 0) - now
    if ttl > 0 then
      local ok, err = d:safe_set("r:" .. sid, 1, ttl)
      if not ok then return err end
    end
  end
  return nil
end

-- Runs in the master at start and on every reload (from postern.init). A fresh master (empty dictionary) loads the
-- snapshot the control plane keeps, so protected services are served at once after a restart, never unprotected:
-- a route whose policy is missing is refused (check()).
function _M.init(options)
  opts = options or {}
  local d = dict()
  if d == nil or d:get("v") ~= nil or not opts.access_snapshot then return end
  local text = read_file(opts.access_snapshot)
  local snapshot = text and cjson.decode(text)
  if type(snapshot) ~= "table" then return end
  if type(snapshot.key) == "string" then d:set("k", snapshot.key) end
  for ref, json in pairs(type(snapshot.policies) == "table" and snapshot.policies or {}) do d:set("p:" .. ref, json) end
  set_revocations(d, snapshot.revoked, ngx.time())
  d:set("v", tostring(snapshot.version or "0"))
end

local function current_key()
  local k = dict():get("k")
  if k ~= verified_key then
    verified, verified_count, verified_key = {}, 0, k
    key_id, key_raw = nil, nil
    if k then
      local id, secret = k:match("^(%S+) (%S+)$")
      if id then key_id, key_raw = id, ngx.decode_base64(secret) end
    end
  end
  return key_id, key_raw
end

local function policy_for(ref)
  local d = dict()
  local version = d:get("v")
  if version ~= policies_version then
    policies, policies_version = {}, version
  end
  local policy = policies[ref]
  if policy == nil then
    local json = d:get("p:" .. ref)
    policy = json and cjson.decode(json) or false
    policies[ref] = policy
  end
  return policy or nil
end

-- 4 bytes of $binary_remote_addr as a number (IPv4; nginx listens on IPv4 only).
local function client_number()
  local bin = ngx.var.binary_remote_addr
  if not bin or #bin ~= 4 then return nil end
  local a, b, c, d = byte(bin, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

local function in_networks(list)
  local ip = client_number()
  if ip == nil then return false end
  for i = 1, #list do
    local size = 2 ^ (32 - list[i][2])
    if floor(ip / size) == floor(list[i][1] / size) then return true end
  end
  return false
end

local function within_any(path, loose, list)
  for i = 1, #list do
    if within(path, loose, list[i]) then return true end
  end
  return false
end

-- Every `name=value` pair of the Cookie header, trimmed.
local function each_cookie(header)
  return header:gmatch("%s*([^;]+)")
end

-- The Cookie header without any of ours: a backend never sees a visitor's session (so it cannot replay it against a
-- neighbour on the same host), protected or not.
local function strip_cookies(header)
  local kept = {}
  for pair in each_cookie(header) do
    if sub(pair, 1, #COOKIE_PREFIX) ~= COOKIE_PREFIX then kept[#kept + 1] = pair end
  end
  if #kept == 0 then
    ngx.req.clear_header("Cookie")
  else
    ngx.req.set_header("Cookie", concat(kept, "; "))
  end
end

local function same(a, b)
  if #a ~= #b then return false end
  local diff = 0
  for i = 1, #a do
    if byte(a, i) ~= byte(b, i) then diff = diff + 1 end
  end
  return diff == 0
end

-- The payload of a cookie value this host's key made, or nil. Cached per worker by host and value.
local function verify(value, host)
  local cache_key = host .. " " .. value
  local hit = verified[cache_key]
  if hit ~= nil then return hit or nil end
  local kid, key = current_key()
  local payload = nil
  local version, vkid, body, mac = value:match("^(v1)%.([^.]+)%.([A-Za-z0-9_-]+)%.([A-Za-z0-9_-]+)$")
  if version and key and vkid == kid then
    local expected = hmac_sha256(key, "v1." .. vkid .. "." .. body .. "|" .. host)
    local given = decode_base64url(mac)
    if expected and given and same(expected, given) then
      local json = decode_base64url(body)
      local decoded = json and cjson.decode(json)
      if type(decoded) == "table" and type(decoded.s) == "string" and type(decoded.p) == "number" then
        payload = decoded
      end
    end
  end
  if verified_count >= VERIFIED_MAX then verified, verified_count = {}, 0 end
  verified[cache_key] = payload or false
  verified_count = verified_count + 1
  return payload
end

-- Printable ASCII only (the control plane made it so; checked again, a CR or LF would split the backend request).
local function header_value(value)
  if type(value) ~= "string" or find(value, "[^\32-\126]") then return "" end
  return value
end

-- The visitor's session for `policy` among the request's cookies, or nil. Found with plain string searches (no
-- per-pair iteration): a name counts at the header's start or after `;`/`; `.
local function session_of(header, host, policy, path, loose)
  local name = policy.cn
  if name == nil then
    name = COOKIE_PREFIX .. policy.i .. "="
    policy.cn = name
  end
  local from, tried = 1, 0
  while true do
    local at = find(header, name, from, true)
    if at == nil then return nil end
    from = at + #name
    local before = at > 1 and byte(header, at - 1) or 59
    if before == 59 or before == 32 then
      tried = tried + 1
      -- A planted look-alike comes first at most a couple of times; each try costs a MAC at worst.
      if tried > 3 then return nil end
      local stop = find(header, ";", from, true)
      local s = verify(sub(header, from, (stop or #header + 1) - 1), host)
      if s and s.p == policy.i and s.e == policy.e and (tonumber(s.x) or 0) > ngx.time()
        and dict():get("r:" .. s.s) == nil and (s.a == nil or within(path, loose, s.a)) then
        return s
      end
    end
  end
end

local function refuse(route)
  local var = ngx.var
  local target = SIGN_IN .. "?s=" .. route.s .. "&rd=" .. ngx.escape_uri(var.request_uri or "/")
  local method = var.request_method
  local accept = var.http_accept or ""
  ngx.header["Cache-Control"] = "no-store"
  -- A page load goes to the sign-in page; an API call, a WebSocket or an event stream gets 401 (checked at upgrade).
  if (method == "GET" or method == "HEAD") and (var.http_upgrade or "") == "" and find(accept, "text/html", 1, true) then
    return ngx.redirect(target, 302)
  end
  ngx.status = 401
  ngx.header["Content-Type"] = "application/json"
  ngx.print(cjson.encode({ message = "Sign-in required", signIn = target }))
  return ngx.exit(401)
end

-- access_by_lua (from postern.route()), after routing and the IP lists, with the request's canonical path (strict and
-- loose form). Returns true when the request may go on to the backend; otherwise it has answered (redirect, 401, 503)
-- and the caller returns.
function _M.check(route, host, path, loose)
  local var = ngx.var
  local header = var.http_cookie
  local ref = route.x
  if ref == nil then
    if header and find(header, COOKIE_PREFIX, 1, true) then strip_cookies(header) end
    return true
  end
  local policy = policy_for(ref)
  if policy == nil then
    -- Fail closed: the route says protected, and the policy is not here (yet). Never served unprotected.
    ngx.log(ngx.ERR, "postern: access policy ", ref, " of service ", route.s, " is not loaded: refusing")
    ngx.exit(503)
    return false
  end
  local passes = (policy.bn and in_networks(policy.bn)) or false
  if not passes and policy.bp then passes = within_any(path, loose, policy.bp) end
  if not passes and header then
    local session = session_of(header, host, policy, path, loose)
    if session then
      -- Header values are worked out once per verified cookie (the worker caches the payload with them).
      if session.hu == nil then
        session.hu, session.hm = header_value(session.u), header_value(session.m)
        local groups = {}
        if type(session.g) == "table" then
          for i = 1, #session.g do
            local g = header_value(session.g[i])
            if g ~= "" then groups[#groups + 1] = g end
          end
        end
        session.hg = concat(groups, ",")
      end
      var.gw_access_user = session.hu
      var.gw_access_email = session.hm
      var.gw_access_groups = session.hg
      passes = true
    end
  end
  if not passes then
    refuse(route)
    return false
  end
  if header and find(header, COOKIE_PREFIX, 1, true) then strip_cookies(header) end
  return true
end

-- access_by_lua of location /_postern/access/: the sign-in exchange goes to the control plane, logged without its
-- query (a share link's token is never written to the access log) and counted for no service.
function _M.exchange()
  local var = ngx.var
  var.gw_log_uri = var.uri
  -- Services without a domain cannot be protected: their port has no sign-in (and no other host's either).
  if tonumber(var.server_port) == opts.no_domain_port then return ngx.exit(404) end
  var.gw_up = opts.console_upstream
end

-- The control socket, under /access (postern.control() hands these over):
--   POST /access        {"version": v, "key": "<id> <base64>", "set": {ref: json}, "del": [ref],
--                        "revoke": {sid: expiry}, "unrevoke": [sid]}
--   GET  /access/digest → {"version": v, "key": md5 | null, "policies": {ref: md5}, "revoked": [sid]}
local function reply(status, value)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  ngx.print(cjson.encode(value))
  return ngx.exit(status)
end

-- 507 in the control socket's refusal format (control-client.ts): what the status page and metrics count.
local function full(d, err)
  local free = d:free_space()
  return reply(507, {
    error = "access dictionary full: " .. err, dict = "gw_access", need = 0, free = free, free_space = free,
    capacity = d:capacity(),
  })
end

function _M.control(method, uri)
  local d = dict()
  if method == "GET" and uri == "/access/digest" then
    local out, revoked = {}, {}
    for _, key in ipairs(d:get_keys(0)) do
      if sub(key, 1, 2) == "p:" then
        local value = d:get(key)
        if value then out[sub(key, 3)] = ngx.md5(value) end
      elseif sub(key, 1, 2) == "r:" then
        revoked[#revoked + 1] = sub(key, 3)
      end
    end
    local k = d:get("k")
    return reply(200, {
      version = d:get("v") or cjson.null,
      key = k and ngx.md5(k) or cjson.null,
      -- Empty tables encode as {} (Debian's cjson has no empty_array): the control plane reads either.
      policies = out,
      revoked = revoked,
    })
  end
  if method ~= "POST" or uri ~= "/access" then return reply(404, { error = "no such access endpoint" }) end
  ngx.req.read_body()
  local body = cjson.decode(ngx.req.get_body_data() or "")
  if type(body) ~= "table" then return reply(400, { error = "body must be a JSON object" }) end
  -- New policies and the key first, deletions last: a failure part-way leaves only extra entries no route names.
  if type(body.key) == "string" then
    local ok, err = d:safe_set("k", body.key)
    if not ok then return full(d, err) end
  end
  for ref, json in pairs(type(body.set) == "table" and body.set or {}) do
    local ok, err = d:safe_set("p:" .. ref, json)
    if not ok then return full(d, err) end
  end
  local err = set_revocations(d, body.revoke, ngx.time())
  if err then return full(d, err) end
  for _, sid in ipairs(type(body.unrevoke) == "table" and body.unrevoke or {}) do d:delete("r:" .. sid) end
  for _, ref in ipairs(type(body.del) == "table" and body.del or {}) do d:delete("p:" .. ref) end
  d:set("v", tostring(body.version or ngx.now()))
  return reply(200, { version = d:get("v") })
end

return _M
