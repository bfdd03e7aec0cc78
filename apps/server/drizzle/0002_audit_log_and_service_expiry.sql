CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_name` text,
	`actor_token_id` integer,
	`address` text,
	`action` text NOT NULL,
	`target_type` text,
	`target_id` integer,
	`target_name` text,
	`node_id` integer,
	`domain` text,
	`before` text,
	`after` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_at_idx` ON `audit_events` (`at`);--> statement-breakpoint
CREATE INDEX `audit_node_idx` ON `audit_events` (`node_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_domain_idx` ON `audit_events` (`domain`,`id`);--> statement-breakpoint
CREATE INDEX `audit_action_idx` ON `audit_events` (`action`,`id`);--> statement-breakpoint
ALTER TABLE `http_services` ADD `expires_at` text;--> statement-breakpoint
CREATE INDEX `http_services_expiry_idx` ON `http_services` (`expires_at`);--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `expires_at` text;--> statement-breakpoint
CREATE INDEX `tcp_services_expiry_idx` ON `tcp_services` (`expires_at`);