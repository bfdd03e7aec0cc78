-- luacheck over nginx's Lua module and its busted specs (the server package's lint script).
std = "ngx_lua"
-- Comments and a few lines of the control endpoint are wider than the TypeScript's 120 columns.
max_line_length = 150
files["src/dataplane/nginx/lua-spec"] = { std = "+busted" }
