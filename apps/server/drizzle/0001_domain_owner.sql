-- Every domain gets an owner: NULL is the admin (all existing domains), otherwise the node whose token may publish
-- on it. drizzle-kit leaves ON DELETE out of ADD COLUMN; SQLite accepts it, and a deleted node's domains fall back
-- to the admin.
ALTER TABLE `domains` ADD `owner_node_id` integer REFERENCES nodes(id) ON DELETE set null;--> statement-breakpoint
CREATE INDEX `domains_owner_idx` ON `domains` (`owner_node_id`);--> statement-breakpoint
-- Services an earlier version accepted on paths the gateway now keeps for itself (ACME, its internal path, and /api
-- on the host of services without a domain) stop being served; they show as disabled until an operator moves them.
UPDATE `http_services` SET `enabled` = 0, `updated_at` = strftime('%Y-%m-%dT%H:%M:%fZ','now')
WHERE `enabled` = 1 AND (
  lower(`path_location`) = '/.well-known/acme-challenge' OR substr(lower(`path_location`), 1, 28) = '/.well-known/acme-challenge/'
  OR lower(`path_location`) = '/_postern' OR substr(lower(`path_location`), 1, 10) = '/_postern/'
  OR (`domain` = '' AND (lower(`path_location`) = '/api' OR substr(lower(`path_location`), 1, 5) = '/api/'))
);
