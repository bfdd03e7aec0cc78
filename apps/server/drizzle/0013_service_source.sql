ALTER TABLE `http_services` ADD `source` text;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `source` text;