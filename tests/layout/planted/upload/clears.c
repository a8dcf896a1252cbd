/* planted: an uploader updating its progress itself instead of through store/uploads.h */
const char *planted_clear(void);
const char *planted_clear(void)
{
    return "UPDATE \"uploads\" SET finished_at = NULL";
}
