CREATE TABLE `traffic_minutes` (
	`service_type` text NOT NULL,
	`service_id` integer NOT NULL,
	`minute` integer NOT NULL,
	`s1` integer DEFAULT 0 NOT NULL,
	`s2` integer DEFAULT 0 NOT NULL,
	`s3` integer DEFAULT 0 NOT NULL,
	`s4` integer DEFAULT 0 NOT NULL,
	`s5` integer DEFAULT 0 NOT NULL,
	`bytes_in` integer DEFAULT 0 NOT NULL,
	`bytes_out` integer DEFAULT 0 NOT NULL,
	`latency` text,
	`sessions` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`seconds_sum` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`service_type`, `service_id`, `minute`)
);
--> statement-breakpoint
CREATE INDEX `traffic_minutes_minute_idx` ON `traffic_minutes` (`minute`);--> statement-breakpoint
ALTER TABLE `http_services` ADD `health_interval_seconds` integer;--> statement-breakpoint
ALTER TABLE `http_services` ADD `health_timeout_seconds` integer;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `health_interval_seconds` integer;--> statement-breakpoint
ALTER TABLE `tcp_services` ADD `health_timeout_seconds` integer;