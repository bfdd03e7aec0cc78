CREATE INDEX `http_services_name_idx` ON `http_services` (lower("name"),`id`);--> statement-breakpoint
CREATE INDEX `tcp_services_name_idx` ON `tcp_services` (lower("name"),`id`);