/* log.h -- one-line log records on stderr: time, program, pid, level. */
#ifndef TALLY_LOG_H
#define TALLY_LOG_H

void	log_init(const char *prog);
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_err(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
