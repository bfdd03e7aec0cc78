ALTER TABLE `http_services` ADD `created_by` text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `http_services` ADD `disabled_by` text;--> statement-breakpoint
ALTER TABLE `http_services` ADD `expiry_set_by` text;--> statement-breakpoint
ALTER TABLE `nodes` ADD `allow_token_networks` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `nodes` ADD `networks_set_by` text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `nodes` ADD `apply_error` text;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `created_by` text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `disabled_by` text;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `expiry_set_by` text;