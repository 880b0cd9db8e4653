/* What MXNet's C API and C predict API (mxnet/c_api.h, mxnet/c_predict_api.h) both declare:
 * the export macro, the scalar types, the array handle and MXGetLastError(). Both headers
 * include it, so each stands alone and the two go together, as MXNet's do. */
#ifndef MXNET_C_API_BASE_H_
#define MXNET_C_API_BASE_H_

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifndef MXNET_DLL
#define MXNET_DLL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t mx_uint;
typedef float mx_float;
typedef void* NDArrayHandle;

/* The message of the calling thread's last failure. */
MXNET_DLL const char* MXGetLastError();

#ifdef __cplusplus
}
#endif

#endif /* MXNET_C_API_BASE_H_ */
