/* first-call.c: the wall time of clprim_context_create and of one first call on
 * 10^7 floats, for docs/PERFORMANCE.md ("Time to the first result").
 * Build: gcc -O2 -Iinclude scripts/first-call.c -o first-call build/libclprim.a -lOpenCL -lm -lpthread
 * Run:   CLPRIM_CACHE_DIR=off CUDA_CACHE_DISABLE=1 POCL_CACHE_DIR=$(mktemp -d) ./first-call median
 * (families: median scan sum sum_exact argmax select select_expr histogram topk
 * scan_exact reduce_by_key_exact dense_exact).
 * `./first-call bare` times a bare OpenCL context and queue on the first GPU
 * instead (the first device if there is no GPU), for clprim's share of
 * clprim_context_create: run each in its own process. */
#include <clprim/clprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
static int bare(void){
  double t0=now();
  cl_platform_id p[8]; cl_uint np=0; cl_device_id d=NULL; cl_int err;
  clGetPlatformIDs(8,p,&np);
  for(cl_uint i=0;i<np&&!d;i++) if(clGetDeviceIDs(p[i],CL_DEVICE_TYPE_GPU,1,&d,NULL)!=CL_SUCCESS) d=NULL;
  for(cl_uint i=0;i<np&&!d;i++) if(clGetDeviceIDs(p[i],CL_DEVICE_TYPE_ALL,1,&d,NULL)!=CL_SUCCESS) d=NULL;
  if(!d){printf("bare: no device\n");return 1;}
  cl_context c=clCreateContext(NULL,1,&d,NULL,NULL,&err);
  cl_command_queue q=clCreateCommandQueue(c,d,0,&err);
  double t1=now();
  printf("bare: context and queue %.0f ms\n",t1-t0);
  clReleaseCommandQueue(q); clReleaseContext(c); return 0;}
int main(int argc,char**argv){
  const char*fam=argc>1?argv[1]:"median";
  if(!strcmp(fam,"bare")) return bare();
  double t0=now();
  clprim_context*ctx; clprim_status st=clprim_context_create(&ctx,NULL);
  if(st){printf("ctx %s\n",clprim_status_name(st));return 1;}
  double t1=now();
  size_t n=10000000; cl_int err;
  float*h=malloc(n*4); for(size_t i=0;i<n;i++) h[i]=(float)((i*2654435761u)%1000003)/1000003.f;
  cl_mem in=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE|CL_MEM_COPY_HOST_PTR,n*4,h,&err);
  cl_mem out=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE,n*8,NULL,&err);
  cl_mem out2=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE,n*8,NULL,&err);
  clFinish(clprim_context_queue(ctx));
  double t2=now();
  clprim_value v; uint64_t c;
  if(!strcmp(fam,"median")) st=clprim_median(ctx,n,CLPRIM_FLOAT,clprim_buf(in),0,&v,clprim_buf(NULL));
  else if(!strcmp(fam,"scan")) st=clprim_scan_exclusive(ctx,n,CLPRIM_FLOAT,clprim_buf(in), 0,clprim_buf(out));
  else if(!strcmp(fam,"sum_exact")) st=clprim_reduce_sum(ctx,n,CLPRIM_FLOAT,clprim_buf(in),CLPRIM_EXACT,&v,clprim_buf(NULL));
  else if(!strcmp(fam,"sum")) st=clprim_reduce_sum(ctx,n,CLPRIM_FLOAT,clprim_buf(in), 0,&v,clprim_buf(NULL));
  else if(!strcmp(fam,"argmax")) st=clprim_argmax(ctx,n,CLPRIM_FLOAT,clprim_buf(in),0,&v,&c,clprim_buf(NULL));
  else if(!strcmp(fam,"select")){clprim_predicate p={CLPRIM_PRED_GT};p.a.f32=0.5f;st=clprim_select(ctx,n,CLPRIM_FLOAT,clprim_buf(in),&p,0,clprim_buf(out),clprim_buf(NULL),&c,clprim_buf(NULL));}
  else if(!strcmp(fam,"select_expr")) st=clprim_select_expr(ctx,n,CLPRIM_FLOAT,clprim_buf(in),"x > 0.5f",0,clprim_buf(out),clprim_buf(NULL),&c,clprim_buf(NULL));
  else if(!strcmp(fam,"histogram")){clprim_value lo={0},hi={0};hi.f32=1;st=clprim_histogram_even(ctx,n,CLPRIM_FLOAT,clprim_buf(in),lo,hi,256,clprim_buf(out),NULL,clprim_buf(NULL));}
  else if(!strcmp(fam,"topk")) st=clprim_topk(ctx,n,CLPRIM_FLOAT,clprim_buf(in),100,0,clprim_buf(out),clprim_buf(out2));
  else if(!strcmp(fam,"scan_exact")) st=clprim_scan_inclusive(ctx,n,CLPRIM_FLOAT,clprim_buf(in),CLPRIM_EXACT,clprim_buf(out));
  else if(!strcmp(fam,"reduce_by_key_exact")||!strcmp(fam,"dense_exact")){
    uint32_t*k=malloc(n*4); for(size_t i=0;i<n;i++) k[i]=(uint32_t)(fam[0]=='r'?i/1000:(i*2654435761u)%1000);
    cl_mem keys=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE|CL_MEM_COPY_HOST_PTR,n*4,k,&err);
    clFinish(clprim_context_queue(ctx)); t2=now();
    st=fam[0]=='r'?clprim_reduce_by_key(ctx,n,CLPRIM_UINT32,clprim_buf(keys),CLPRIM_FLOAT,clprim_buf(in),CLPRIM_EXACT,clprim_buf(out),clprim_buf(out2),&c,clprim_buf(NULL))
                  :clprim_reduce_by_key_dense(ctx,n,CLPRIM_UINT32,clprim_buf(keys),CLPRIM_FLOAT,clprim_buf(in),1000,CLPRIM_EXACT,clprim_buf(out),clprim_buf(NULL),NULL,clprim_buf(NULL));}
  clFinish(clprim_context_queue(ctx));
  double t3=now();
  printf("%s: create %.0f ms, first call %.0f ms (%s)\n",fam,t1-t0,t3-t2,clprim_status_name(st));
  clprim_context_free(ctx); return 0;}
